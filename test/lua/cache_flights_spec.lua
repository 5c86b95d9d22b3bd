-- The response cache's misses in flight (gateway/lua/rpcstack/cache_flights.lua): identical
-- misses wait for one fetch, the fetches at once are bounded, and a place a lost client held
-- comes back.
local Flights = require 'rpcstack.cache_flights'

local RULE = { args = { 'qty', 'bool' } }

-- A flights table whose clock moves only when a waiting call sleeps; on_sleep runs at each sleep.
local function fresh(o)
  local clock = { ms = 0 }
  local f = Flights.new({
    max = o.max or 4, bytes = o.bytes or 1e9, max_object = o.max_object or 100, reply_max = 1000,
    timeout = '{"timeout":true}',
    now_ms = function() return clock.ms end,
    sleep = function(ms)
      clock.ms = clock.ms + ms
      if o.on_sleep then o.on_sleep(clock) end
    end,
  })
  return f, clock
end

local function stats() return { coalesced = 0, bypassed = 0 } end
local function call(n) return { key = 'eth|eth_getBlockByNumber|0x' .. n .. '|false', rule = RULE, at = n } end
-- A txn whose txn:done keeps what it was given.
local function txn()
  local t = {}
  function t.done(self, reply) self.reply = reply end
  return t
end

describe('cache flights', function()
  it('an identical miss waits for the fetch in flight and is answered with its answer and its own id', function()
    local flights
    local lead
    -- The leader's answer lands while the identical call waits.
    local function answered() flights.land(lead, 200, '{"id":1,"result":"r"}', '{"id":', ',"result":"r"}') end
    flights = fresh({ on_sleep = answered })
    local st = stats()
    lead = flights.miss(txn(), st, 0, call(1), 'body', '1', nil, 'alice')
    assert.is_truthy(lead.slot)
    local t = txn()
    assert.is_nil(flights.miss(t, st, 0, call(1), 'body', '"b"', nil, 'bob'))
    assert.same({ status = 200, headers = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'COALESCED' } },
                  body = '{"id":"b","result":"r"}' }, t.reply)
    assert.equal(1, st.coalesced)
    assert.equal(0, flights.running())
  end)

  it('a call that waits too long is answered 504', function()
    local flights = fresh({})
    local st = stats()
    -- The leader is held (its client is still there) and never answers.
    local lead = flights.miss(txn(), st, 0, call(1), 'body', '1')
    local t = txn()
    assert.is_nil(flights.miss(t, st, 0, call(1), 'body', '2'))
    assert.equal(504, t.reply.status)
    assert.equal('{"timeout":true}', t.reply.body)
    assert.equal(1, lead.flight.waiters)
  end)

  it('holds at most max fetches at once, and at most bytes of answers as estimated; others go to the node', function()
    local flights = fresh({ max = 2 })
    local st = stats()
    local a = flights.miss(txn(), st, 0, call(1), 'b', '1')
    assert.is_truthy(flights.miss(txn(), st, 0, call(2), 'b', '1'))
    assert.is_nil(flights.miss(txn(), st, 0, call(3), 'b', '1'))
    assert.equal(1, st.bypassed)
    flights.land(a, 200, 'x')
    assert.is_truthy(flights.miss(txn(), st, 0, call(3), 'b', '1'))

    local small = fresh({ bytes = 250, max_object = 100 })
    st = stats()
    assert.is_truthy(small.miss(txn(), st, 0, call(1), 'b', '1'))
    assert.is_truthy(small.miss(txn(), st, 0, call(2), 'b', '1'))
    assert.is_nil(small.miss(txn(), st, 0, call(3), 'b', '1'))
    -- Answers of the method were small: its estimate halves towards them, and a place is free.
    small.learn(Flights.class_of(call(1).key, RULE), 10)
    assert.is_truthy(small.miss(txn(), st, 0, call(3), 'b', '1'))
  end)

  it('the sweep gives back the place of a hand-over whose service never ran, and its key is fetched again', function()
    local flights = fresh({ max = 1 })
    local st = stats()
    local p = flights.miss(txn(), st, 0, call(1), 'b', '1')
    local tok = flights.hand(p, 100)
    flights.sweep(105)
    assert.equal(1, flights.running())
    flights.sweep(111)
    assert.equal(0, flights.running())
    assert.is_nil(flights.take(tok))
    assert.is_truthy(flights.miss(txn(), st, 0, call(1), 'b', '1').slot)
  end)

  it('a place whose holder was dropped unfinished comes back with the collector', function()
    local flights = fresh({ max = 1 })
    local st = stats()
    flights.miss(txn(), st, 0, call(1), 'b', '1')
    assert.is_nil(flights.miss(txn(), st, 0, call(2), 'b', '1'))
    collectgarbage('collect')
    collectgarbage('collect')
    assert.equal(0, flights.running())
    assert.is_truthy(flights.miss(txn(), st, 0, call(2), 'b', '1'))
  end)

  it('no call joins a flight begun before its chain changed', function()
    local flights = fresh({})
    local st = stats()
    flights.miss(txn(), st, 0, call(1), 'b', '1')
    flights.forget('eth')
    local p = flights.miss(txn(), st, 1, call(1), 'b', '1')
    assert.is_truthy(p.slot)
    assert.equal(0, st.coalesced)
  end)
end)
