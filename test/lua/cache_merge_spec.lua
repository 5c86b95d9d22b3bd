-- Reads at the head that identical calls in flight share (gateway/lua/rpcstack/cache_merge.lua),
-- and the flights' side of it (rpcstack/cache_flights.lua): a call joins only a fetch sent since
-- the newest head the gateway knew, never takes an answer showing an older head or one that
-- could not be cut around its id, and a waiting call is woken as the answer lands.
local keys = require 'rpcstack.cache_keys'
local merge = require 'rpcstack.cache_merge'
local Flights = require 'rpcstack.cache_flights'

-- A chain as cache.lua makes it, with the merge table gateway/cache.ts writes.
local EVM = {
  name = 'eth', rules = {}, ids = keys.IDS.stringOrNumber, stored = {},
  merge = { eth_blockNumber = 'qty', eth_getBlockByNumber = 'number', eth_call = true },
}
local STRK = {
  name = 'strk', rules = {}, ids = keys.IDS.stringOrInteger, stored = {},
  merge = { starknet_blockNumber = 'int', starknet_blockHashAndNumber = 'block_number', starknet_call = true },
}

describe('reads at the head', function()
  it('a single call of a listed method may be shared, with its id span', function()
    local s = '{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber","params":[]}'
    local method, how, a, b = merge.mergeable(EVM, s)
    assert.equal('eth_blockNumber', method)
    assert.equal('qty', how)
    assert.equal('7', s:sub(a, b))
    local call = '{"jsonrpc":"2.0","id":"x","method":"eth_call","params":[{"to":"0x01","data":"0x"},"latest"]}'
    assert.equal('eth_call', (merge.mergeable(EVM, call)))
  end)

  it('never a send, a pending read, a batch, a repeated member or an id the node would not answer', function()
    for _, s in ipairs({
      '{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x00"]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x01"},"pending"]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["pending",false]}',
      '[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}]',
      '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","method":"eth_sendRawTransaction","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","METHOD":"eth_sendRawTransaction","params":[]}',
      '{"jsonrpc":"2.0","id":null,"method":"eth_blockNumber","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]} x',
      '{"jsonrpc":"1.0","id":1,"method":"eth_blockNumber","params":[]}',
    }) do
      assert.is_nil(merge.mergeable(EVM, s), s)
    end
    local at = function(tag)
      return '{"jsonrpc":"2.0","id":1,"method":"starknet_call","params":{"block_id":"' .. tag .. '"}}'
    end
    assert.is_nil(merge.mergeable(STRK, at('pre_confirmed')))
    assert.equal('starknet_call', (merge.mergeable(STRK, at('latest'))))
  end)

  it('reads the head each kind of answer shows, and none from an error', function()
    assert.equal(0x1f, merge.head_of('qty', '{"jsonrpc":"2.0","id":1,"result":"0x1f"}'))
    assert.equal(812, merge.head_of('int', '{"jsonrpc":"2.0","id":1,"result":812}'))
    local block = '{"jsonrpc":"2.0","id":1,"result":{"hash":"0xab","number":"0x20","transactions":[]}}'
    assert.equal(0x20, merge.head_of('number', block))
    local strk = '{"jsonrpc":"2.0","id":1,"result":{"block_hash":"0x1","block_number":9}}'
    assert.equal(9, merge.head_of('block_number', strk))
    assert.is_nil(merge.head_of('qty', '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"0x20"}}'))
    assert.is_nil(merge.head_of(true, '{"jsonrpc":"2.0","id":1,"result":"0x20"}'))
  end)

  it('the sequence moves only with a newer head', function()
    local h = merge.heads()
    assert.equal(0, h.seq('eth'))
    h.see('eth', 10)
    assert.equal(1, h.seq('eth'))
    h.see('eth', 9)
    h.see('eth', 10)
    h.see('eth', nil)
    assert.equal(1, h.seq('eth'))
    assert.equal(10, h.head('eth'))
    h.see('eth', 11)
    assert.equal(2, h.seq('eth'))
    assert.equal(0, h.seq('strk'))
  end)
end)

describe('which reads lead a fetch', function()
  it('the first of a read leads; after a fetch nobody joined, one in 8; after one somebody joined, each', function()
    local lanes = merge.lanes()
    local led = {}
    for i = 1, 17 do led[i] = lanes.lead('k') end
    local want = {}
    for i = 1, 17 do want[i] = i % 8 == 1 end
    assert.same(want, led)
    lanes.landed('k', true)
    assert.is_true(lanes.lead('k'))
    assert.is_true(lanes.lead('k'))
    lanes.landed('k', false)
    assert.is_false(lanes.lead('k'))
    -- Each read on its own.
    assert.is_true(lanes.lead('other'))
  end)

  it('forgets every read past 4096 known, so memory stays bounded', function()
    local lanes = merge.lanes()
    assert.is_true(lanes.lead('x'))
    assert.is_false(lanes.lead('x'))
    for i = 1, 4095 do lanes.lead('k' .. i) end
    assert.is_false(lanes.lead('x'))
    lanes.lead('one more')
    -- Forgotten: it counts from its first call again.
    assert.is_true(lanes.lead('x'))
  end)

  it('a fetch that lands as the reads known start over leaves a read that still leads and counts', function()
    local lanes = merge.lanes()
    for i = 1, 4096 do lanes.lead('k' .. i) end
    -- The 4097th read known starts over: the landed read is then the only one.
    lanes.landed('x', true)
    assert.is_true(lanes.lead('x'))
    lanes.landed('x', false)
    assert.is_false(lanes.lead('x'))
  end)
end)

-- Flights whose waiting calls are woken by wake(f); on_wait runs at each wait, the clock moves by ms.
local function fresh(on_wait)
  local clock, woken = { ms = 0 }, 0
  local f = Flights.new({
    max = 4, bytes = 1e9, max_object = 100, reply_max = 1000, timeout = '{"timeout":true}',
    now_ms = function() return clock.ms end,
    wait = function(flight, ms)
      clock.ms = clock.ms + ms
      on_wait(flight)
    end,
    wake = function() woken = woken + 1 end,
  })
  return f, function() return woken end
end
local function txn()
  local t = {}
  function t.done(self, reply) self.reply = reply end
  return t
end
local function stats() return { coalesced = 0, bypassed = 0 } end
local function head_call(floor) return { key = 'meth|{"id":\0}', class = 'eth_blockNumber', floor = floor } end
local PRE, POST = '{"jsonrpc":"2.0","id":', ',"result":"0x10"}'

describe('merged flights', function()
  it('a waiting call is woken as the answer lands and takes it with its own id', function()
    local flights, lead
    local woken
    flights, woken = fresh(function() flights.land(lead, 200, nil, PRE, POST, 0x10) end)
    local st = stats()
    lead = flights.miss(txn(), st, '0:1:0', head_call(0x10), 'body', '1', nil, 'a')
    local t = txn()
    assert.is_nil(flights.miss(t, st, '0:1:0', head_call(0x10), 'body', '"b"', nil, 'b'))
    assert.equal('{"jsonrpc":"2.0","id":"b","result":"0x10"}', t.reply.body)
    assert.equal(1, woken())
    assert.equal(1, st.coalesced)
  end)

  it('a call arriving after a newer head was seen does not join a fetch sent before it', function()
    local flights = fresh(function() error('must not wait') end)
    local st = stats()
    local lead = flights.miss(txn(), st, '0:1:0', head_call(0x10), 'body', '1', nil, 'a')
    assert.is_truthy(lead.slot)
    -- The epoch carries the head sequence (and HAProxy's count of heads unseen): it moved.
    local second = flights.miss(txn(), st, '0:2:0', head_call(0x11), 'body', '2', nil, 'b')
    assert.is_truthy(second and second.slot)
    local third = flights.miss(txn(), st, '0:1:1', head_call(0x10), 'body', '3', nil, 'c')
    assert.is_truthy(third and third.slot)
    assert.equal(0, st.coalesced)
  end)

  it('an answer showing an older head than the call knew, or one not cut around its id, is not taken', function()
    local flights, lead, answer
    flights = fresh(function() answer() end)
    local st = stats()
    lead = flights.miss(txn(), st, 'e', head_call(0x10), 'body', '1', nil, 'a')
    -- Another node, behind: it answers 0xf although 0x10 was known as the call arrived.
    answer = function() flights.land(lead, 200, nil, PRE, ',"result":"0xf"}', 0xf) end
    local t = txn()
    assert.is_nil(flights.miss(t, st, 'e', head_call(0x10), 'body', '2', nil, 'b'))
    assert.is_nil(t.reply)
    assert.equal(1, st.bypassed)
    lead = flights.miss(txn(), st, 'e', head_call(0x10), 'body', '1', nil, 'a')
    answer = function() flights.land(lead, 200, '{"id":1,"result":"0x10","x":[', nil, nil, nil) end
    t = txn()
    assert.is_nil(flights.miss(t, st, 'e', head_call(0x10), 'body', '2', nil, 'b'))
    assert.is_nil(t.reply)
    assert.equal(2, st.bypassed)
    assert.equal(0, st.coalesced)
  end)
end)
