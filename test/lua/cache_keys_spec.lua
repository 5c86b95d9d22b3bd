-- The response cache's keys (gateway/lua/rpcstack/cache_keys.lua): which ids a call may carry
-- to be answered from the cache, and the alias of a body.
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'

local RULES = { eth_getBlockByNumber = { args = { 'qty', 'bool' }, num = 1 } }

local function key(body)
  local m = keys.flatcall(body, 1)
  if not m then
    local ok, mm = pcall(json.members, body, 1)
    if not ok then return nil end
    m = mm
  end
  return (keys.plan('eth', RULES, 100, {}, body, m))
end

local function call(id)
  return '{"jsonrpc":"2.0","id":' .. id .. ',"method":"eth_getBlockByNumber","params":["0x2",false]}'
end

describe('ids', function()
  it('strings and numbers as RFC 8259 writes them have a key', function()
    for _, id in ipairs({ '1', '0', '-0', '1.5', '1.5e3', '-1.25E-7', '9007199254740993', '"a"', '"q\\"t"' }) do
      assert.are.equal('eth|eth_getBlockByNumber|0x2|false', key(call(id)), id)
    end
  end)

  it('anything else the node would refuse has none', function()
    for _, id in ipairs({ '01', '-01', '1.', '.5', '+1', '1e', '1e+', '1-', '0x1', 'null', 'true', 'false', '{}', '[]', '[1]', '"\\x"' }) do
      assert.is_nil(key(call(id)), id)
    end
  end)

  it('a body whose id is not a plain number or string has no alias', function()
    for _, id in ipairs({ 'null', 'true', '-', '{}' }) do assert.is_nil(keys.unid(call(id), 'eth'), id) end
    local a = keys.unid(call('7'), 'eth')
    assert.are.equal(a, (keys.unid(call('"x"'), 'eth')))
    -- What follows a number that is cut short is part of the rest: no alias of a valid body.
    for _, id in ipairs({ '01', '1.', '1e', '-01' }) do assert.are_not.equal(a, (keys.unid(call(id), 'eth')), id) end
  end)
end)

describe('split', function()
  it('cuts any one JSON-RPC answer around its id, and nothing else', function()
    assert.are.same({ '{"jsonrpc":"2.0","id":', ',"error":{"code":-32000}}' }, { keys.split('{"jsonrpc":"2.0","id":5,"error":{"code":-32000}}') })
    assert.is_nil(keys.split('[{"jsonrpc":"2.0","id":5,"result":1}]'))
    assert.is_nil(keys.split('<html>'))
  end)
end)
