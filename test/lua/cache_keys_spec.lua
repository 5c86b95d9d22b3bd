-- The response cache's keys, finality test and id splice (gateway/lua/rpcstack/cache_keys.lua).
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'

-- Rules as gateway/cache.ts writes them into gateway_data.lua.
local EVM = {
  eth_chainId = { args = {} },
  net_version = { args = {} },
  eth_getBlockByNumber = { args = { 'qty', 'bool' }, num = 1 },
  eth_getBlockByHash = { args = { 'hash', 'bool' }, final = 'number' },
  eth_getLogs = { args = { 'filter' }, num = 1 },
}
local STARKNET = {
  starknet_specVersion = { args = {} },
  starknet_getBlockWithTxHashes = { args = { 'block' }, names = { 'block_id' }, status = 'status' },
  starknet_getTransactionReceipt = { args = { 'felt' }, names = { 'transaction_hash' }, status = 'finality_status' },
  starknet_getTransactionByHash = {
    args = { 'felt' }, names = { 'transaction_hash' }, after = 'starknet_getTransactionReceipt',
  },
}
local HASH = '0x' .. string.rep('ab', 32)

-- A call as clients send it.
local function rpc(method, params)
  return '{"jsonrpc":"2.0","method":"' .. method .. '","params":' .. params .. ',"id":1}'
end

-- A chain as the cache's functions see it.
local function chain(rules, final, stored)
  return { name = 'eth', rules = rules or EVM, ids = keys.IDS.scalar, final = final, stored = stored or {} }
end

-- The key of a single call as the lookup reads it.
local function key(body, rules, final, stored)
  local r = keys.read(chain(rules, final, stored), body)
  return r and r.calls[1].key
end

describe('plan: the canonical key of a call', function()
  it('is the same for spellings the node reads the same: case of hex digits, blanks, member order, id', function()
    local k = key('{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x1A",false],"id":1}', EVM, 100)
    assert.equal('eth|eth_getBlockByNumber|0x1a|false', k)
    local spaced = '{ "id" : "x", "params" : [ "0x1a" , false ], "method":"eth_getBlockByNumber", "jsonrpc":"2.0" }'
    assert.equal(k, key(spaced, EVM, 100))
  end)

  it('is nil for a quantity the node would refuse or read otherwise: leading zeros, no 0x, over 13 digits', function()
    for _, q in ipairs({ '"0x01"', '"1"', '"0x' .. string.rep('f', 14) .. '"', '1', '"latest"' }) do
      assert.is_nil(key(rpc('eth_getBlockByNumber', '[' .. q .. ',false]'), EVM, 1e15), q)
    end
  end)

  it('is nil above the final block, while the final block is unknown, and for a wrong arity', function()
    local at = function(n) return rpc('eth_getBlockByNumber', '["' .. n .. '",false]') end
    assert.is_not_nil(key(at('0x64'), EVM, 100))
    assert.is_nil(key(at('0x65'), EVM, 100))
    assert.is_nil(key(at('0x1'), EVM, nil))
    assert.is_nil(key('{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x1"],"id":1}', EVM, 100))
    assert.is_nil(key('{"jsonrpc":"2.0","method":"eth_getBlockByNumber","params":["0x1",false,1],"id":1}', EVM, 100))
  end)

  it('is nil for other members than jsonrpc, method, params and id, other cases, jsonrpc not "2.0"', function()
    assert.is_nil(key('{"jsonrpc":"2.0","method":"eth_chainId","id":1,"x":1}'))
    assert.is_nil(key('{"jsonrpc":"2.0","Method":"eth_chainId","id":1}'))
    assert.is_nil(key('{"jsonrpc":"2.1","method":"eth_chainId","id":1}'))
    assert.is_nil(key('{"jsonrpc":"2.0","method":"eth_chainId"}'))
    assert.equal('eth|eth_chainId', key('{"jsonrpc":"2.0","method":"eth_chainId","id":null}'))
  end)

  it('is nil for a method spelled with an escape or not in the rules', function()
    assert.is_nil(key([[{"jsonrpc":"2.0","method":"eth_ch\u0061inId","id":1}]]))
    assert.is_nil(key('{"jsonrpc":"2.0","method":"eth_blockNumber","id":1}'))
  end)

  it('reads hashes at 64 digits only and lower-cases them', function()
    local by = function(h) return rpc('eth_getBlockByHash', '["' .. h .. '",true]') end
    assert.equal('eth|eth_getBlockByHash|' .. HASH .. '|true', key(by(HASH:upper():gsub('^0X', '0x'))))
    assert.is_nil(key(by(HASH .. 'a')))
  end)

  it('reads Starknet named parameters in the rule\'s order, and block ids by number or hash only', function()
    local get = function(p) return rpc('starknet_getBlockWithTxHashes', p) end
    assert.equal('eth|starknet_getBlockWithTxHashes|n5', key(get('{"block_id":{"block_number":5}}'), STARKNET))
    assert.equal('eth|starknet_getBlockWithTxHashes|n5', key(get('[{"block_number":5}]'), STARKNET))
    assert.equal('eth|starknet_getBlockWithTxHashes|h0xabc', key(get('[{"block_hash":"0xABC"}]'), STARKNET))
    assert.is_nil(key(get('["latest"]'), STARKNET))
    assert.is_nil(key(get('[{"block_number":5,"block_hash":"0x1"}]'), STARKNET))
    assert.is_nil(key(get('[{"block_number":05}]'), STARKNET))
    assert.is_nil(key(get('{"block_id":{"block_number":5},"extra":1}'), STARKNET))
    assert.is_nil(key(get('{"Block_id":{"block_number":5}}'), STARKNET))
  end)

  it('keys eth_getLogs by its whole filter, only for a numbered range that ends at or below the final block', function()
    local ADDR = '0x' .. string.rep('C0', 20)
    local logs = function(f) return rpc('eth_getLogs', '[' .. f .. ']') end
    local f = '{"fromBlock":"0x10","toBlock":"0x1A","address":"' .. ADDR .. '",'
      .. '"topics":["' .. HASH:upper():gsub('^0X', '0x') .. '",null,["' .. HASH .. '",null]]}'
    local k = key(logs(f), EVM, 100)
    assert.equal('eth|eth_getLogs|0x10-0x1a@' .. ADDR:lower() .. '#[' .. HASH .. ',n,[' .. HASH .. ';n]]', k)
    -- The same filter spelled otherwise (member order, blanks) has the same key.
    local other = '{ "topics":["' .. HASH .. '",null,["' .. HASH .. '",null]], "address":"' .. ADDR:lower() .. '",'
      .. ' "toBlock":"0x1a","fromBlock":"0x10" }'
    assert.equal(k, key(logs(other), EVM, 100))
    -- A list of addresses, no topics, no address: each its own key.
    assert.equal('eth|eth_getLogs|0x1-0x2@[' .. ADDR:lower() .. ';' .. ADDR:lower() .. ']#-',
      key(logs('{"fromBlock":"0x1","toBlock":"0x2","address":["' .. ADDR .. '","' .. ADDR .. '"]}'), EVM, 100))
    assert.equal('eth|eth_getLogs|0x1-0x2@-#-', key(logs('{"fromBlock":"0x1","toBlock":"0x2"}'), EVM, 100))
    -- Past the final block, or while it is unknown: the node answers.
    assert.is_nil(key(logs('{"fromBlock":"0x1","toBlock":"0x65"}'), EVM, 100))
    assert.is_nil(key(logs('{"fromBlock":"0x1","toBlock":"0x2"}'), EVM, nil))
    -- Tags, a missing end, a block hash, another member or another spelling of a name: the node decides.
    for _, bad in ipairs({
      '{"fromBlock":"0x1","toBlock":"latest"}', '{"fromBlock":"earliest","toBlock":"0x2"}', '{"fromBlock":"0x1"}',
      '{"blockHash":"' .. HASH .. '"}', '{"fromBlock":"0x1","toBlock":"0x2","blockHash":"' .. HASH .. '"}',
      '{"fromBlock":"0x1","toBlock":"0x2","limit":5}', '{"FromBlock":"0x1","toBlock":"0x2"}',
      '{"fromBlock":"0x01","toBlock":"0x2"}', '{"fromBlock":"0x1","toBlock":"0x2","address":"0x12"}',
      '{"fromBlock":"0x1","toBlock":"0x2","address":null}',
      '{"fromBlock":"0x1","toBlock":"0x2","topics":"' .. HASH .. '"}',
      '{"fromBlock":"0x1","toBlock":"0x2","topics":[[["' .. HASH .. '"]]]}',
      '{"fromBlock":"0x1","toBlock":"0x2","topics":["0x12"]}',
      '"0x1"',
    }) do
      assert.is_nil(key(logs(bad), EVM, 100), bad)
    end
    assert.is_nil(key(rpc('eth_getLogs', '[{"fromBlock":"0x1","toBlock":"0x2"},1]'), EVM, 100))
  end)

  it('keys a rule with `after` only once the answer it follows is held', function()
    local body = rpc('starknet_getTransactionByHash', '["0x1f"]')
    assert.is_nil(key(body, STARKNET, nil, {}))
    local stored = { ['eth|starknet_getTransactionReceipt|0x1f'] = {} }
    assert.equal('eth|starknet_getTransactionByHash|0x1f', key(body, STARKNET, nil, stored))
  end)
end)

describe('storable: whether an answer may be kept', function()
  local rule = EVM.eth_getBlockByHash
  it('keeps a result whose finality field is at or below the final block, as the text around its id', function()
    local body = '{"jsonrpc":"2.0","id":42,"result":{"number":"0x10","hash":"0x1"}}'
    local pre, post = keys.storable(chain(nil, 16), rule, body)
    assert.equal('{"jsonrpc":"2.0","id":', pre)
    assert.equal(',"result":{"number":"0x10","hash":"0x1"}}', post)
    assert.is_nil(keys.storable(chain(nil, 15), rule, body))
    assert.is_nil(keys.storable(chain(nil, nil), rule, body))
  end)

  it('never keeps an error, a null result, trailing text or an answer without an id', function()
    for _, body in ipairs({
      '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}', '{"jsonrpc":"2.0","id":1,"result":null}',
      '{"jsonrpc":"2.0","id":1,"result":"0x1"} x', '{"jsonrpc":"2.0","result":"0x1"}',
    }) do
      assert.is_nil(keys.storable(chain(nil, 1), EVM.eth_chainId, body), body)
    end
  end)

  it('keeps a Starknet answer only once ACCEPTED_ON_L1', function()
    local st = STARKNET.starknet_getBlockWithTxHashes
    local answer = function(status) return '{"jsonrpc":"2.0","id":1,"result":{"status":"' .. status .. '"}}' end
    assert.is_not_nil(keys.storable(chain(), st, answer('ACCEPTED_ON_L1')))
    assert.is_nil(keys.storable(chain(), st, answer('ACCEPTED_ON_L2')))
  end)
end)

describe('the id splice', function()
  local ON_ETH = { name = 'eth', ids = keys.IDS.scalar }
  it('answers a hit with the request\'s id as sent, every other byte the node\'s', function()
    local node = '{"jsonrpc":"2.0","id":1,"result":{"number":"0x1","x":"\\u00e9"}}'
    local pre, post = keys.storable(chain(nil, 5), EVM.eth_getBlockByHash, node)
    for _, id in ipairs({ '"abc"', '123456789012', '-1.5e3', 'null', '"\\u0041"' }) do
      assert.equal('{"jsonrpc":"2.0","id":' .. id .. ',"result":{"number":"0x1","x":"\\u00e9"}}', pre .. id .. post)
    end
  end)

  it('unid cuts a plain id out of a body, chain first, and answers its span', function()
    local s = '{"jsonrpc":"2.0","id":"a-1","method":"eth_chainId"}'
    local alias, a, b = keys.unid(ON_ETH, s)
    assert.equal('eth|{"jsonrpc":"2.0","id":\0,"method":"eth_chainId"}', alias)
    assert.equal('"a-1"', s:sub(a, b))
    assert.equal(alias, (keys.unid(ON_ETH, '{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}')))
    assert.are_not.equal(alias, (keys.unid({ name = 'strk', ids = keys.IDS.scalar }, s)))
  end)

  it('unid gives up on a backslash anywhere, an id with leading zeros, or no id', function()
    assert.is_nil(keys.unid(ON_ETH, [[{"id":1,"method":"eth_ch\u0061inId"}]]))
    assert.is_nil(keys.unid(ON_ETH, '{"id":01,"method":"eth_chainId"}'))
    assert.is_nil(keys.unid(ON_ETH, '{"method":"eth_chainId"}'))
  end)
end)

-- Disagreements the differential fuzz found (test/gatewayLua.test.ts): the cache answered calls
-- that the node would not have answered with a result.
describe('regressions found by the fuzz', function()
  local STRK = { name = 'strk', rules = STARKNET, ids = keys.IDS.stringOrInteger, stored = {} }
  local ETH = { name = 'eth', rules = EVM, ids = keys.IDS.scalar, final = 100, stored = {} }
  local single = function(c, body) local r = keys.read(c, body) return r and r.calls[1].key end

  it('numbers JSON refuses (01, 1., 1e, 1e+, 1-) leave a call uncached: the node answers a parse error', function()
    for _, n in ipairs({ '01', '1.', '1e', '1e+', '1-', '-', '.5', '+1', '--1' }) do
      assert.is_nil(single(ETH, '{"jsonrpc":"2.0","method":"net_version","id":' .. n .. '}'), n)
      assert.is_nil(single(ETH, '{"jsonrpc":"2.0","method":"eth_chainId","params":[],"id":' .. n .. ',"x":"\\n"}'), n)
      assert.is_nil(keys.read(STRK, '[{"jsonrpc":"2.0","method":"starknet_chainId","id":' .. n .. '}]'), n)
      assert.has_error(function() json.skipv(n, 1, 1) end, nil, n)
    end
    for _, n in ipairs({ '0', '-0', '1', '-12', '1.5', '1e3', '1E+3', '1.5e-3' }) do
      assert.equal(#n + 1, json.skipv(n, 1, 1), n)
    end
  end)

  it('an id geth does not answer as a call (an object or an array) leaves the call uncached', function()
    for _, id in ipairs({ '[]', '{"a":1}', '[1]' }) do
      assert.is_nil(single(ETH, '{"jsonrpc":"2.0","method":"net_version","id":' .. id .. '}'), id)
    end
    for _, id in ipairs({ '1', '"x"', 'null', 'true', '1.5e3', '-0' }) do
      assert.is_not_nil(single(ETH, '{"jsonrpc":"2.0","method":"net_version","id":' .. id .. '}'), id)
    end
  end)

  it('on Starknet only string and integer ids are cached: Juno reads null as a notification', function()
    local call = function(id) return '{"jsonrpc":"2.0","method":"starknet_specVersion","id":' .. id .. '}' end
    for _, id in ipairs({ 'true', 'false', 'null', '1.5', '1e3', '{"a":1}', '[]' }) do
      assert.is_nil(single(STRK, call(id)), id)
    end
    for _, id in ipairs({ '1', '-0', '"x"', '"\\u0041"', '123456789012345678901234567890' }) do
      assert.is_not_nil(single(STRK, call(id)), id)
    end
    -- A body equal to a held one but for such an id is not answered through an alias either.
    assert.is_nil(keys.unid(STRK, call('null')))
    assert.is_nil(keys.unid(STRK, call('1.5')))
    assert.is_not_nil(keys.unid(STRK, call('7')))
    assert.is_not_nil(keys.unid(ETH, call('null')))
  end)
end)
