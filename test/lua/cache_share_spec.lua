-- The response cache's store (gateway/lua/rpcstack/cache_store.lua): each project key's share of
-- the budget, and dropping a chain's entries when the node holds another chain.
local Store = require 'rpcstack.cache_store'

local function fresh(budget)
  local stats = { eth = { stored = 0, bytes = 0, evictions = 0 }, strk = { stored = 0, bytes = 0, evictions = 0 } }
  return Store.new(budget, budget, stats), stats
end

-- Stores under key k, read by owner, an answer whose entry costs exactly `size` bytes.
local function put(s, chain, k, size, owner)
  return s.put(chain, k, string.rep('x', size - Store.OVERHEAD - #k), '', owner)
end

describe("each key's share", function()
  it('a key holding more than an equal share makes room from its own entries', function()
    local s = fresh(10000)
    for i = 1, 3 do put(s, 'eth', 'a' .. i, 1000, 'alice') end
    -- bob scans: the store fills, then each of bob's answers takes the place of bob's oldest.
    for i = 1, 50 do put(s, 'eth', 'b' .. i, 1000, 'bob') end
    for i = 1, 3 do assert.is_truthy(s.entries['a' .. i], 'alice lost a' .. i) end
    assert.is_true(s.bytes() <= 10000)
    assert.are.equal(3000, s.held('alice'))
    assert.are.equal(7000, s.held('bob'))
  end)

  it('takes from everyone while the key holds less than its share', function()
    local s = fresh(10000)
    for i = 1, 10 do put(s, 'eth', 'a' .. i, 1000, 'alice') end
    for i = 1, 10 do put(s, 'eth', 'b' .. i, 1000, 'bob') end
    -- Two keys: each keeps half, alice her most recent.
    assert.are.equal(5000, s.held('alice'))
    assert.are.equal(5000, s.held('bob'))
    for i = 6, 10 do assert.is_truthy(s.entries['a' .. i]) end
  end)

  it('counts an entry to the key that read it last, aliases included', function()
    local s = fresh(10000)
    put(s, 'eth', 'k', 1000, 'alice')
    s.get('k', 'bob')
    assert.are.equal(0, s.held('alice'))
    assert.are.equal(1000, s.held('bob'))
    s.alias(s.entries.k, 'alias-of-k')
    assert.are.equal(1000 + #'alias-of-k' + Store.OVERHEAD, s.held('bob'))
  end)
end)

describe('flush', function()
  it('drops every entry of one chain, and its aliases, and nothing of another', function()
    local s, stats = fresh(100000)
    put(s, 'eth', 'e1', 1000, 'alice')
    s.alias(s.entries.e1, 'e1-alias')
    put(s, 'strk', 's1', 1000, 'alice')
    put(s, 'eth', 'e2', 1000, 'bob')
    s.flush('eth')
    assert.is_nil(s.entries.e1)
    assert.is_nil(s.entries.e2)
    assert.is_nil(s.aliases['e1-alias'])
    assert.is_truthy(s.entries.s1)
    assert.are.same({ stored = 0, bytes = 0, evictions = 0 }, stats.eth)
    assert.are.equal(1000, s.bytes())
    assert.are.equal(0, s.held('bob'))
  end)
end)
