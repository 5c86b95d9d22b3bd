-- The gateway's own answers to refused calls, and how a batch holding them is split and joined
-- (gateway/lua/rpcstack/answers.lua).
local answers = require 'rpcstack.answers'
local json = require 'rpcstack.json'

local EVM = { deny = { 'debug_', 'admin_' }, allow = {} }
local function failed(status) return -32000 - status, 'status ' .. status end

describe('refusal', function()
  it('carries the id exactly as sent: number, string, null', function()
    for _, id in ipairs({ '7', '-1.5e3', '"abc"', '"a\\"b"', 'null' }) do
      local want = '{"jsonrpc":"2.0","id":' .. id .. ',"error":{"code":-32601,'
        .. '"message":"method admin_peers is not served by this gateway"}}'
      assert.equal(want, answers.refusal(id, 'admin_peers'))
    end
  end)

  it('answers id null when the call has none or one JSON-RPC does not allow', function()
    for _, id in ipairs({ false, 'true', '{"a":1}', '[1]' }) do
      assert.matches('"id":null,', answers.refusal(id or nil, 'admin_peers'), 1, true)
    end
  end)

  it('names the method as sent, JSON-escaped, cut to a bound', function()
    local r = answers.refusal('1', 'Debug_"Set\\Head"\n\1')
    assert.matches('method Debug_\\"Set\\\\Head\\"\\n\\u0001 is not served', r, 1, true)
    local long = answers.refusal('1', 'debug_' .. string.rep('é', 500))
    local msg = long:match('"message":"method (.-) is not served')
    assert.equal(answers.MAX_METHOD, utf8.len(msg) - 3)
    local bad = answers.refusal('1', 'debug_\255é\128')
    assert.matches('"message":"method debug_\239\191\189é\239\191\189 is', bad, 1, true)
  end)
end)

describe('id_of', function()
  it('takes the last "id" key in any case, raw; nil for a notification', function()
    local t = '{"ID":1,"method":"x","params":{"id":5},"Id":"two"}'
    assert.equal('"two"', answers.id_of(t, 1))
    assert.is_nil(answers.id_of('{"method":"x"}', 1))
    assert.is_nil(answers.id_of('[1]', 1))
  end)
end)

describe('plan and join', function()
  local batch = '[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},'
    .. '{"jsonrpc":"2.0","id":"b","method":"admin_peers"},'
    .. '{"jsonrpc":"2.0","method":"debug_x"},'
    .. ' {"jsonrpc":"2.0","id":3,"method":"eth_blockNumber","params":[]} ]'

  it('relays the allowed calls as sent, in order, as a smaller batch', function()
    local p = answers.plan(batch, EVM)
    assert.equal('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},'
      .. '{"jsonrpc":"2.0","id":3,"method":"eth_blockNumber","params":[]}]', p.sub)
    assert.equal(4, #p.calls)
  end)

  it('puts each refused call in its place and the node\'s answers by id, whatever their order', function()
    local p = answers.plan(batch, EVM)
    local node = '[{"jsonrpc":"2.0","id":3,"result":"0x5"},{"jsonrpc":"2.0","id":1,"result":"0x1"}]'
    local status, text = answers.join(p, 200, node, failed)
    assert.equal(200, status)
    local items = json.elements(text, 1)
    local got = {}
    for i, it in ipairs(items) do got[i] = text:sub(it.a, it.b) end
    assert.same({
      '{"jsonrpc":"2.0","id":1,"result":"0x1"}',
      '{"jsonrpc":"2.0","id":"b","error":{"code":-32601,'
        .. '"message":"method admin_peers is not served by this gateway"}}',
      '{"jsonrpc":"2.0","id":3,"result":"0x5"}',
    }, got)
  end)

  it('keeps answers the ids do not match, after the others', function()
    local p = answers.plan(batch, EVM)
    local _, text = answers.join(p, 200, '[{"id":1,"result":1},{"id":null,"error":{"code":-32600}}]', failed)
    assert.matches('^%[{"id":1,"result":1},{"jsonrpc":"2.0","id":"b".-},{"id":null,"error":{"code":%-32600}}%]$', text)
  end)

  it('relays the node\'s failure status and still answers every call with an id', function()
    local p = answers.plan(batch, EVM)
    for _, case in ipairs({ { 503, '<html>' }, { 0, nil }, { 200, 'not json' } }) do
      local status, text = answers.join(p, case[1], case[2], failed)
      local want = case[1] == 503 and 503 or 502
      assert.equal(want, status)
      local err = '{"jsonrpc":"2.0","id":1,"error":{"code":' .. (-32000 - want)
        .. ',"message":"status ' .. want .. '"}}'
      assert.matches(err, text, 1, true)
      assert.matches('"id":"b","error":{"code":-32601', text, 1, true)
      assert.matches('"id":3,"error"', text, 1, true)
    end
  end)

  it('needs no node when every call is refused, and answers nothing to notifications alone', function()
    local p = answers.plan('[{"id":1,"method":"admin_peers"},{"method":"debug_x"}]', EVM)
    assert.is_nil(p.sub)
    local status, text = answers.join(p, 200, '', failed)
    assert.equal(200, status)
    assert.equal('[{"jsonrpc":"2.0","id":1,"error":{"code":-32601,'
      .. '"message":"method admin_peers is not served by this gateway"}}]', text)
    assert.same({ 200, '' }, { answers.join(answers.plan('[{"method":"admin_peers"}]', EVM), 200, '', failed) })
  end)

  it('answers each item that is no call (a nested batch, a number, a string) with Invalid Request '
    .. 'in its place, and never relays it', function()
    local body = '[{"id":1,"method":"eth_chainId"},[{"id":2,"method":"admin_addPeer"}],5,"x"]'
    local p = answers.plan(body, EVM)
    assert.equal('[{"id":1,"method":"eth_chainId"}]', p.sub)
    local status, text = answers.join(p, 200, '[{"jsonrpc":"2.0","id":1,"result":"0x1"}]', failed)
    assert.equal(200, status)
    local invalid = '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}'
    assert.equal(invalid, answers.INVALID)
    local three = invalid .. ',' .. invalid .. ',' .. invalid
    assert.equal('[{"jsonrpc":"2.0","id":1,"result":"0x1"},' .. three .. ']', text)
    -- Alone, as the JSON-RPC 2.0 examples have it ([1,2,3]): no node is asked.
    local only = answers.plan('[1,2,3]', EVM)
    assert.is_nil(only.sub)
    assert.same({ 200, '[' .. three .. ']' }, { answers.join(only, 200, '', failed) })
    -- And when the node fails, they keep their answer.
    local _, failed_text = answers.join(p, 503, nil, failed)
    assert.matches(invalid, failed_text, 1, true)
  end)

  it('is nil for anything but a JSON array', function()
    assert.is_nil(answers.plan('{"id":1,"method":"admin_peers"}', EVM))
    assert.is_nil(answers.plan('[{"id":1,"method":"admin_peers"}', EVM))
  end)
end)
