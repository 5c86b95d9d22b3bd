-- The response cache's metrics, as Prometheus text for the private metrics port.
--
--   text(o) -> body, o: { budget (bytes), fetch_max, running (fetches now), live (the lines of
--       rpcstack_cache_live, rpcstack/cache_live.lua), stats (chain -> counts) }
local SERIES = {
  { 'requests_total', 'counter', 'requests',
    'JSON-RPC POSTs naming a cacheable method or a read at the head (the calls the cache looks at).' },
  { 'hits_total', 'counter', 'hits', 'Calls answered from the cache.' },
  { 'misses_total', 'counter', 'misses', 'Cacheable calls fetched from the node.' },
  { 'coalesced_total', 'counter', 'coalesced',
    'Calls answered with the answer to an identical call in flight: node calls saved.' },
  { 'bypassed_total', 'counter', 'bypassed',
    'Cacheable misses relayed to the node as without the cache: every place among the fetches was taken.' },
  { 'merge_fetches_total', 'counter', 'merge_fetches',
    'Reads at the head fetched from the node for themselves and the identical calls that joined them.' },
  { 'merged_total', 'counter', 'merged',
    'Reads at the head answered with an identical call\'s answer in flight: node calls saved.' },
  { 'merge_alone_total', 'counter', 'merge_alone',
    'Reads at the head relayed alone: nobody joined the last fetch of that read (a fetch costs more than a relay).' },
  { 'merge_bypassed_total', 'counter', 'merge_bypassed',
    'Reads at the head relayed alone: no place among the fetches, or the answer in flight showed an older head.' },
  { 'chain_changes_total', 'counter', 'changes',
    'Times the node held another chain than the cache held (another hash at a final block): its entries went.' },
  { 'evictions_total', 'counter', 'evictions', 'Entries dropped to stay within the budget.' },
  { 'entries', 'gauge', 'stored', 'Answers held.' },
  { 'bytes', 'gauge', 'bytes', 'Bytes held, counted against the budget.' },
}

local function text(o)
  local out = {
    '# HELP rpcstack_cache_budget_bytes Byte budget of the response cache (gateway.cache.maxBytes).',
    '# TYPE rpcstack_cache_budget_bytes gauge', 'rpcstack_cache_budget_bytes ' .. o.budget,
    '# HELP rpcstack_cache_lua_memory_bytes Memory of the Lua state that holds the cache.',
    '# TYPE rpcstack_cache_lua_memory_bytes gauge',
    string.format('rpcstack_cache_lua_memory_bytes %d', math.floor(collectgarbage('count') * 1024)),
    '# HELP rpcstack_cache_fetches Misses being fetched from the nodes now (at most ' .. o.fetch_max .. ').',
    '# TYPE rpcstack_cache_fetches gauge', 'rpcstack_cache_fetches ' .. o.running,
  }
  for _, line in ipairs(o.live) do out[#out + 1] = line end
  for _, x in ipairs(SERIES) do
    out[#out + 1] = '# HELP rpcstack_cache_' .. x[1] .. ' ' .. x[4]
    out[#out + 1] = '# TYPE rpcstack_cache_' .. x[1] .. ' ' .. x[2]
    for name, st in pairs(o.stats) do
      out[#out + 1] = string.format('rpcstack_cache_%s{chain="%s"} %d', x[1], name, st[x[3]])
    end
  end
  return table.concat(out, '\n') .. '\n'
end

return { text = text }
