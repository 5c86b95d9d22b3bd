-- The response cache's metrics text (gateway/lua/rpcstack/cache_metrics.lua).
local metrics = require 'rpcstack.cache_metrics'

describe('cache metrics', function()
  it('says the budget, the fetches now, the live lines and each count per chain', function()
    local st = { requests = 7, hits = 3, misses = 2, coalesced = 1, bypassed = 0, changes = 1, evictions = 4,
                 stored = 5, bytes = 900, merge_fetches = 6, merged = 11, merge_bypassed = 2,
                 merge_alone = 3 }
    local text = metrics.text({ budget = 1000, fetch_max = 8, running = 2,
                                live = { 'rpcstack_cache_live{chain="eth"} 1' }, stats = { eth = st } })
    for _, line in ipairs({ 'rpcstack_cache_budget_bytes 1000', 'rpcstack_cache_fetches 2',
                            'rpcstack_cache_live{chain="eth"} 1', 'rpcstack_cache_requests_total{chain="eth"} 7',
                            'rpcstack_cache_hits_total{chain="eth"} 3',
                            'rpcstack_cache_chain_changes_total{chain="eth"} 1',
                            'rpcstack_cache_merge_fetches_total{chain="eth"} 6',
                            'rpcstack_cache_merged_total{chain="eth"} 11',
                            'rpcstack_cache_merge_bypassed_total{chain="eth"} 2',
                            'rpcstack_cache_merge_alone_total{chain="eth"} 3',
                            'rpcstack_cache_entries{chain="eth"} 5', 'rpcstack_cache_bytes{chain="eth"} 900' }) do
      assert.truthy(text:find('\n' .. line .. '\n', 1, true), line)
    end
    assert.truthy(text:find('(at most 8)', 1, true))
    assert.equal('\n', text:sub(-1))
  end)
end)
