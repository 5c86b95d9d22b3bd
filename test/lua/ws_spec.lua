-- A WebSocket client's messages as the gateway reads them (gateway/lua/rpcstack/ws.lua).
local ws = require 'rpcstack.ws'
local answers = require 'rpcstack.answers'

local KEY = '\90\23\195\8'
local RULES = {
  deny = { 'debug_', 'admin_' }, allow = { 'debug_tracetransaction' }, max_batch = 3,
  subscribe = { opens = 'subscribe', closes = 'unsubscribe' }, filter = '^[^_]+_new.*filter$',
}
local function subs(socket, key) return { socket = socket or 0, socket_max = 2, key = key or 0, key_max = 5 } end
local call = function(method, id)
  return '{"jsonrpc":"2.0","id":' .. (id or 1) .. ',"method":"' .. method .. '","params":[]}'
end

describe('frames', function()
  it('reads a client frame header: 7-, 16- and 64-bit lengths, the mask, FIN and the opcode', function()
    for _, n in ipairs({ 5, 125, 126, 65535, 65536, 1 << 20 }) do
      local f = ws.frame(string.rep('x', n), KEY)
      local hlen, len, op, fin, key = ws.header(f:sub(1, 14))
      assert.same({ #f - n, n, 1, true, KEY }, { hlen, len, op, fin, key })
      assert.equal(string.rep('x', n), ws.unmask(f:sub(hlen + 1), key))
    end
  end)

  it('builds a close frame with its status code and reason, masked on the client side', function()
    for _, key in ipairs({ KEY, false }) do
      local f = ws.close(1008, 'project key revoked', key or nil)
      local hlen, len, op, fin, mask = ws.header(f:sub(1, 14))
      assert.same({ 21, 8, true }, { len, op, fin })
      assert.equal(key or nil, mask)
      assert.equal(string.pack('>I2', 1008) .. 'project key revoked', ws.unmask(f:sub(hlen + 1), mask))
    end
    assert.equal(125, #ws.close(1000, string.rep('x', 300)) - 2)
  end)

  it('answers nothing until the header is all in', function()
    local f = ws.frame(string.rep('x', 300), KEY)
    for cut = 0, 7 do assert.is_nil(ws.header(f:sub(1, cut))) end
    assert.equal(8, (ws.header(f:sub(1, 8))))
  end)

  it('unmasks any length, word by word and byte by byte', function()
    for n = 0, 19 do
      local text = string.rep('{"a":1}', 3):sub(1, n)
      assert.equal(text, ws.unmask(ws.unmask(text, KEY), KEY))
    end
    assert.equal('plain', ws.unmask('plain', nil))
  end)

  it('unmasks a frame where it lies in the input, and reads its header there, as from its own copy', function()
    for _, n in ipairs({ 0, 1, 7, 8, 67, 1023, 1024, 1031, 3000 }) do
      local text = string.rep('{"jsonrpc":"2.0","id":1}', 200):sub(1, n)
      local input = 'ab' .. ws.frame(text, KEY) .. 'rest'
      local hlen, len, op, fin, key = ws.header(input, 3)
      assert.same({ ws.header(input:sub(3, 16)) }, { hlen, len, op, fin, key })
      assert.equal(text, ws.unmask(input, key, 3 + hlen, len))
    end
    assert.equal('lai', ws.unmask('plain', nil, 2, 3))
  end)
end)

describe('check', function()
  it('reads the common message (one object, one "method" key, no escape) without the parser', function()
    local sub = ' {"id":1,"Method" : "eth_subscribe","params":["newHeads"]}'
    assert.same({ nil, 1, nil, 1, 0, 0 }, { ws.check(sub, RULES, subs()) })
    local _, _, out = ws.check('{"id":1,"method":"admin_peers"}', RULES, subs())
    assert.equal('{"jsonrpc":"2.0","id":1,"method":"' .. ws.DENIED .. '","params":[]}', out)
    -- Cut short, it goes on as it is: the node answers a parse error, as over HTTP.
    assert.same({ nil, 1, nil, 0, 0, 0 }, { ws.check('{"method":"eth_call"', RULES, subs()) })
  end)

  it('lets allowed calls through untouched and counts every call of a batch', function()
    assert.same({ nil, 1, nil, 0, 0, 0 }, { ws.check(call('eth_blockNumber'), RULES, subs()) })
    local batch = '[' .. call('a_b', 1) .. ',' .. call('c_d', 2) .. ',' .. call('debug_traceTransaction', 3) .. ']'
    assert.same({ nil, 3, nil, 0, 0, 0 }, { ws.check(batch, RULES, subs()) })
  end)

  it('refuses what it cannot read and batches over the limit: the socket is closed on these', function()
    assert.equal('invalid', (ws.check('[{"method":"eth_call"}', RULES, subs())))
    assert.equal('invalid', (ws.check('{"method":"eth_call","method":"eth_call"', RULES, subs())))
    assert.equal('invalid', (ws.check('not json', RULES, subs())))
    assert.equal('batch', (ws.check('[' .. string.rep(call('x_y') .. ',', 3) .. call('x_y') .. ']', RULES, subs())))
  end)

  it('rewrites a denied call into a call no node serves, under its own id, read as the node reads it', function()
    for _, text in ipairs({
      call('debug_setHead', '"abc"'), [[{"id":"abc","m\u0065thod":"admin_peers"}]],
      '{"method":"eth_call","METHOD":"admin_peers","id":"abc"}', '{"id":1,"method":"admin_peers","ID":"abc"}',
    }) do
      local verdict, calls, out = ws.check(text, RULES, subs())
      assert.same({ nil, 1 }, { verdict, calls })
      assert.equal('{"jsonrpc":"2.0","id":"abc","method":"' .. ws.DENIED .. '","params":[]}', out)
    end
  end)

  it('in a batch, rewrites only the refused calls and keeps the others byte for byte', function()
    local text = '[ ' .. call('eth_chainId', 1) .. ' , ' .. call('admin_peers', 2) .. ',{"method":"debug_x"}]'
    local _, calls, out = ws.check(text, RULES, subs())
    assert.equal(3, calls)
    local denied = '"method":"' .. ws.DENIED .. '","params":[]}'
    local id2 = '{"jsonrpc":"2.0","id":2,'
    assert.equal('[' .. call('eth_chainId', 1) .. ',' .. id2 .. denied .. ']', out)
  end)

  it('drops a denied notification: a message left with no call is not forwarded', function()
    assert.same({ nil, 1, '', 0, 0, 1 }, { ws.check('{"method":"admin_peers"}', RULES, subs()) })
    assert.same({ nil, 2, '', 0, 0, 2 }, { ws.check('[{"method":"admin_peers"},{"method":"debug_x"}]', RULES, subs()) })
  end)

  it('says how many calls it refused in place: denied, no call, past the subscription cap', function()
    local batch = '[' .. table.concat({ call('eth_chainId', 1), call('admin_peers', 2), '7' }, ',') .. ']'
    assert.equal(2, select(6, ws.check(batch, RULES, subs())))
    assert.equal(1, select(6, ws.check(call('eth_subscribe', 3), RULES, subs(2, 0))))
    local allowed = '[' .. call('eth_chainId', 1) .. ',' .. call('eth_subscribe', 2) .. ']'
    assert.equal(0, select(6, ws.check(allowed, RULES, subs())))
  end)

  it('with mark, sends a denied call under the marker id and keeps the gateway\'s answer for it', function()
    local kept = {}
    local mark = function(answer) kept[#kept + 1] = answer; return '"m-' .. #kept .. '"' end
    local text = '[' .. call('eth_chainId', 1) .. ',' .. call('Admin_Peers', '"x"') .. ',{"method":"debug_x"}]'
    local _, _, out = ws.check(text, RULES, subs(), mark)
    local denied = '"method":"' .. ws.DENIED .. '","params":[]}'
    assert.equal('[' .. call('eth_chainId', 1) .. ',{"jsonrpc":"2.0","id":"m-1",' .. denied .. ']', out)
    assert.same({ answers.refusal('"x"', 'Admin_Peers') }, kept)
  end)

  it('with mark, sends an item that is no call (a nested batch, a number) as a call no node serves, '
    .. 'answered Invalid Request', function()
    local kept = {}
    local mark = function(answer) kept[#kept + 1] = answer; return '"m-' .. #kept .. '"' end
    local text = '[' .. call('eth_chainId', 1) .. ',[{"id":2,"method":"admin_addPeer"}],7]'
    local _, n, out = ws.check(text, RULES, subs(), mark)
    assert.equal(3, n)
    local denied = '"method":"' .. ws.DENIED .. '","params":[]}'
    local marked = function(i) return '{"jsonrpc":"2.0","id":"m-' .. i .. '",' .. denied end
    assert.equal('[' .. call('eth_chainId', 1) .. ',' .. marked(1) .. ',' .. marked(2) .. ']', out)
    assert.same({ answers.INVALID, answers.INVALID }, kept)
    assert.not_matches('admin_addPeer', out, 1, true)
  end)

  it('reanswer replaces the node\'s answers to marked calls, alone or in a batch, and nothing else', function()
    local mine = answers.refusal('"x"', 'admin_peers')
    local pending = { ['"m-1"'] = mine, n = 1 }
    assert.is_nil(ws.reanswer('{"jsonrpc":"2.0","id":"m-2","error":{}}', pending, '"m-'))
    assert.is_nil(ws.reanswer('{"jsonrpc":"2.0","id":1,"result":"0x1"}', pending, '"m-'))
    assert.equal(mine, ws.reanswer('{"jsonrpc":"2.0","id":"m-1","error":{"code":-32601}}', pending, '"m-'))
    assert.same({ n = 0 }, pending)
    pending = { ['"m-2"'] = mine, n = 1 }
    local out = ws.reanswer('[{"id":1,"result":"0x1"}, {"id":"m-2","error":{}}]', pending, '"m-')
    assert.equal('[{"id":1,"result":"0x1"},' .. mine .. ']', out)
    assert.equal(0, pending.n)
  end)

  it('counts subscriptions and refuses those past the socket cap or the key cap', function()
    assert.same({ nil, 1, nil, 1, 0, 0 }, { ws.check(call('eth_subscribe'), RULES, subs(0, 0)) })
    local two = '[' .. call('eth_subscribe', 1) .. ',' .. call('eth_subscribe', 2) .. ']'
    local _, _, out, opened = ws.check(two, RULES, subs(1, 0))
    assert.equal(1, opened)
    assert.truthy(out:find('"id":2,"method":"' .. ws.OVER_CAP .. '"', 1, true))
    assert.falsy(out:find('"id":1,"method":"' .. ws.OVER_CAP .. '"', 1, true))
    local _, _, over, none = ws.check(call('ETH_SUBSCRIBE', 7), RULES, subs(0, 5))
    assert.same({ '{"jsonrpc":"2.0","id":7,"method":"' .. ws.OVER_CAP .. '","params":[]}', 0 }, { over, none })
  end)

  it('counts every name that holds "subscribe" as a subscription, whatever its namespace, not unsubscribe', function()
    local opening = { 'juno_subscribeNewHeads', 'pathfinder_subscribe', 'starknet_subscribeEvents', 'subscribe' }
    for _, m in ipairs(opening) do
      assert.same({ nil, 1, nil, 1, 0, 0 }, { ws.check(call(m), RULES, subs()) }, m)
    end
    local closing = { 'starknet_unsubscribe', 'eth_unsubscribe', 'unsubscribe_all', 'starknet_subscriptionReorg' }
    for _, m in ipairs(closing) do
      assert.same({ nil, 1, nil, 0, 0, 0 }, { ws.check(call(m), RULES, subs()) }, m)
    end
  end)

  it('counts filter creations and refuses those past the filters left to the key', function()
    local s = subs()
    s.filters = 2
    local three = '[' .. call('eth_newFilter', 1) .. ',' .. call('eth_newBlockFilter', 2) .. ','
      .. call('ETH_NEWPENDINGTRANSACTIONFILTER', 3) .. ']'
    local _, calls, out, opened, made = ws.check(three, RULES, s)
    assert.same({ 3, 0, 2 }, { calls, opened, made })
    assert.truthy(out:find('"id":3,"method":"' .. ws.OVER_FILTERS .. '"', 1, true))
    assert.falsy(out:find('"id":2,"method":"' .. ws.OVER_FILTERS .. '"', 1, true))
    -- Polling, removing and getLogs create nothing; without a bound every creation goes through.
    for _, m in ipairs({ 'eth_getFilterChanges', 'eth_uninstallFilter', 'eth_getLogs' }) do
      assert.same({ nil, 1, nil, 0, 0, 0 }, { ws.check(call(m), RULES, s) }, m)
    end
    assert.same({ nil, 3, nil, 0, 3, 0 }, { ws.check(three, RULES, subs()) })
  end)
end)

describe('unit', function()
  local text = function(s, fin, op) -- one masked frame, FIN and opcode as given
    local f = ws.frame(s, KEY)
    return string.char((fin == false and 0 or 128) | (op or 1)) .. f:sub(2)
  end

  it('is a whole message: one frame, or its fragments with a control frame between them', function()
    local one = text('hello')
    assert.same({ #one + 1, { { 7, 5, KEY } } }, { ws.unit(one .. 'rest', 1, 100, 10) })
    local ping = text('', true, 9)
    local frags = text('he', false) .. ping .. text('llo', true, 0)
    local stop, frames = ws.unit(frags, 1, 100, 10)
    assert.equal(#frags + 1, stop)
    assert.equal(2, #frames)
    local payload = function(f) return ws.unmask(frags:sub(f[1], f[1] + f[2] - 1), f[3]) end
    assert.equal('hello', payload(frames[1]) .. payload(frames[2]))
  end)

  it('a control frame alone is a unit, even an empty close frame of 6 bytes', function()
    local close = text('', true, 8)
    assert.same({ 7, {} }, { ws.unit(close, 1, 100, 10) })
  end)

  it('says how much must be in before it is whole, and never more than it needs', function()
    local one = text(string.rep('x', 300))
    assert.same({ nil, #one }, { ws.unit(one:sub(1, 50), 1, 1000, 10) })
    assert.same({ nil, 2 }, { ws.unit(one:sub(1, 1), 1, 1000, 10) })
    assert.same({ nil, 8 }, { ws.unit(one:sub(1, 7), 1, 1000, 10) })
    local frags = text('ab', false) .. text('cd', true, 0)
    assert.same({ nil, #frags }, { ws.unit(frags:sub(1, #frags - 1), 1, 1000, 10) })
  end)

  it('refuses a message over max, fragments counted together, and framing over max + room', function()
    assert.is_false(ws.unit(text(string.rep('x', 101)), 1, 100, 10))
    assert.is_false(ws.unit(text(string.rep('x', 60), false) .. text(string.rep('x', 60), true, 0), 1, 100, 10))
    local tiny = string.rep(text('x', false), 30)
    assert.is_false(ws.unit(tiny, 1, 100, 10))
    assert.is_false(ws.unit(text(string.rep('x', 126), true, 9), 1, 1000, 10))
  end)
end)
