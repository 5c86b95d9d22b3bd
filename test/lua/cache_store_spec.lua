-- The response cache's store: budget, eviction and aliases (gateway/lua/rpcstack/cache_store.lua).
local Store = require 'rpcstack.cache_store'
local OVERHEAD = Store.OVERHEAD

local function fresh(budget, max_object)
  local stats = { eth = { stored = 0, bytes = 0, evictions = 0 } }
  return Store.new(budget, max_object or budget, stats), stats.eth
end

-- An entry whose size (key, text and overhead) is exactly n bytes.
local function put(s, key, n) return s.put('eth', key, string.rep('x', n - #key - OVERHEAD), '') end

describe('the store', function()
  it('counts each entry as its key, its text and a fixed overhead against the budget', function()
    local s, st = fresh(10000)
    local e = s.put('eth', 'k', 'pre', 'post')
    assert.equal(1 + 3 + 4 + OVERHEAD, e.size)
    assert.equal(e.size, s.bytes())
    assert.same({ stored = 1, bytes = e.size, evictions = 0 }, st)
  end)

  it('evicts the least recently used entries, never more than it must, to stay within the budget', function()
    local s, st = fresh(3000)
    put(s, 'a', 1000); put(s, 'b', 1000); put(s, 'c', 1000)
    s.get('a')
    put(s, 'd', 1000)
    assert.is_nil(s.entries.b)
    assert.is_not_nil(s.entries.a)
    assert.is_not_nil(s.entries.c)
    assert.equal(3000, s.bytes())
    assert.equal(1, st.evictions)
    put(s, 'e', 2500)
    assert.same({ 'e' }, (function() local k = {} for x in pairs(s.entries) do k[#k + 1] = x end return k end)())
    assert.equal(2500, s.bytes())
    assert.same({ stored = 1, bytes = 2500, evictions = 4 }, st)
  end)

  it('does not keep an answer over the object limit or the whole budget, and drops nothing for it', function()
    local s = fresh(3000, 1500)
    put(s, 'a', 1000)
    assert.is_nil(put(s, 'big', 1501))
    assert.is_nil(fresh(1000).put('eth', 'k', string.rep('x', 1000), ''))
    assert.is_not_nil(s.entries.a)
  end)

  it('replaces an entry stored again under the same key, counted once', function()
    local s, st = fresh(5000)
    put(s, 'a', 1000); put(s, 'a', 1200)
    assert.equal(1200, s.bytes())
    assert.same({ stored = 1, bytes = 1200, evictions = 0 }, st)
  end)

  it('counts aliases against the budget, keeps at most a few per entry and drops them with it', function()
    local s, st = fresh(4000)
    local e = put(s, 'a', 1000)
    for i = 1, Store.ALIASES_PER_ENTRY + 1 do s.alias(e, 'alias' .. i) end
    assert.equal(Store.ALIASES_PER_ENTRY, #e.aliases)
    assert.is_nil(s.aliases['alias' .. (Store.ALIASES_PER_ENTRY + 1)])
    assert.equal(1000 + Store.ALIASES_PER_ENTRY * (6 + OVERHEAD), s.bytes())
    assert.equal(s.bytes(), st.bytes)
    put(s, 'b', 4000)
    assert.is_nil(s.aliases.alias1)
    assert.equal(4000, s.bytes())
  end)

  it('makes room for an alias by evicting others, but never the entry it names', function()
    local s = fresh(2000)
    put(s, 'old', 600)
    local e = put(s, 'a', 1400 - 1)
    s.alias(e, 'm')
    assert.is_nil(s.entries.old)
    assert.equal(e, s.aliases.m)
    local lone = fresh(1000)
    local only = put(lone, 'a', 1000)
    lone.alias(only, 'm')
    assert.is_nil(lone.aliases.m)
    assert.equal(only, lone.entries.a)
  end)
end)
