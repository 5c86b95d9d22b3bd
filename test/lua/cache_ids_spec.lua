-- Which ids an EVM call may carry to be answered from the response cache
-- (gateway/lua/rpcstack/cache_keys.lua IDS.stringOrNumber, the evm rule of gateway/cache.ts
-- CACHE_IDS), escapes in ids, and cutting any one answer around its id (split).
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'

local ETH = {
  name = 'eth', ids = keys.IDS.stringOrNumber, final = 100, stored = {},
  rules = { eth_getBlockByNumber = { args = { 'qty', 'bool' }, num = 1 } },
}

local function key(body)
  local r = keys.read(ETH, body)
  return r and r.calls[1].key
end

local function call(id)
  return '{"jsonrpc":"2.0","id":' .. id .. ',"method":"eth_getBlockByNumber","params":["0x2",false]}'
end

describe('EVM ids', function()
  it('strings and numbers as JSON writes them have a key, and by-number calls their block', function()
    for _, id in ipairs({ '1', '0', '-0', '1.5', '1.5e3', '-1.25E-7', '9007199254740993', '"a"', '"q\\"t"' }) do
      assert.are.equal('eth|eth_getBlockByNumber|0x2|false', key(call(id)), id)
    end
    assert.are.equal(2, keys.read(ETH, call('1')).calls[1].at)
  end)

  it('null and booleans (hardhat answers -32600), objects, arrays and broken numbers have none', function()
    for _, id in ipairs({ 'null', 'true', 'false', '{}', '[]', '[1]', '01', '-01', '1.', '1e', '1-' }) do
      assert.is_nil(key(call(id)), id)
      assert.is_nil(keys.read(ETH, '[' .. call('1') .. ',' .. call(id) .. ']'), id)
    end
  end)

  it('an escape JSON does not have makes the body no JSON, and the call uncached', function()
    for _, id in ipairs({ '"a\\x"', '"\\u12G4"', '"\\U0041"' }) do
      assert.has_error(function() json.skipv(id, 1, 1) end, nil, id)
      assert.is_nil(key(call(id)), id)
    end
    assert.are.equal(15, json.skipv('"\\u00e9\\n\\/\\""', 1, 1))
  end)

  it('a body whose id is null or a boolean has no alias', function()
    for _, id in ipairs({ 'null', 'true', '-' }) do assert.is_nil(keys.unid(ETH, call(id)), id) end
    assert.are.equal((keys.unid(ETH, call('7'))), (keys.unid(ETH, call('"x"'))))
  end)
end)

describe('split', function()
  it('cuts any one JSON-RPC answer around its id, and nothing else', function()
    local pre, post = keys.split('{"jsonrpc":"2.0","id":5,"error":{"code":-32000}}')
    assert.are.same({ '{"jsonrpc":"2.0","id":', ',"error":{"code":-32000}}' }, { pre, post })
    assert.is_nil(keys.split('[{"jsonrpc":"2.0","id":5,"result":1}]'))
    assert.is_nil(keys.split('<html>'))
  end)

  it("reads geth's and hardhat's order (id before result) without walking the result, any other whole", function()
    local txs = string.rep('"0x1",', 1000) .. '"0x2"'
    local big = '{"jsonrpc":"2.0","id":-1.5e3,"result":{"transactions":[' .. txs .. ']}}\n'
    local pre, post = keys.split(big)
    assert.are.equal('{"jsonrpc":"2.0","id":', pre)
    assert.are.equal(big:sub(#pre + #'-1.5e3' + 1), post)
    local null = '{"jsonrpc":"2.0","id":"x","result":null}'
    assert.are.same({ '{"jsonrpc":"2.0","id":', ',"result":null}' }, { keys.split(null) })
    assert.is_nil(keys.storable(ETH, { args = {} }, null))
    local last = '{"jsonrpc":"2.0","result":"0x1","id":3}'
    assert.are.same({ '{"jsonrpc":"2.0","result":"0x1","id":', '}' }, { keys.split(last) })
    assert.is_nil(keys.split('{"jsonrpc":"2.0","id":1,"result":1}x'))
  end)
end)
