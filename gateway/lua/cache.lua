-- The Lua half of the response cache (see gateway/cache.ts), loaded by HAProxy's lua-load.
-- HAProxy 2.6 and 3.2 both provide every call used here (checked in doc/lua-api/index.rst at
-- v2.6.0 and v3.2.0): core.register_action, core.register_service ("http"), core.register_task,
-- core.httpclient (post{url, dst, body, headers, timeout}; "able to send and receive more than an
-- HAProxy bufsize"), core.msleep, core.now.
--
-- - action rpc_cache_lookup (http-req, after the policy, key and rate checks): reads the body,
--   works out a canonical key per call; a single call with a key, or a batch whose every call
--   hits, is handed to the service through txn.cache_tok; anything else goes to the node as before.
-- - service rpc_cache: answers hits from memory, fetches misses itself with the httpclient (so
--   answers of any size are stored and streamed without raising tune.bufsize) and stores final
--   answers. The stored text is the node's, cut around its id: a hit splices the request's id
--   as sent between the two halves, so `result` stays byte-equal and the id exact.
-- - a task polls each chain's final block (Ethereum `finalized`, Starknet `l1_accepted`).
-- - service rpc_cache_metrics: Prometheus text for the private metrics port.
-- The httpclient reaches the nodes through HAProxy's own listener for it (fetch.dst), which hands
-- each chain's requests to its relay backend: no node URL is known here.
-- One Lua state (lua-load) serves all threads, so the store and its budget are global. The
-- chains, rules and budgets come from the stack's generated data (gateway_data.lua).
local DATA = require('gateway_data').cache
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'
local Store = require 'rpcstack.cache_store'

local CHAINS, RULES, BUDGET, POLL_MS, POLL_AGENT, REPLY_MAX = DATA.chains, DATA.rules, DATA.budget, DATA.pollMs, DATA.pollAgent, DATA.replyMax
local FETCH = DATA.fetch
local skip, members, elements = json.skip, json.members, json.elements
local plan, storable, unid, flatcall, hexq = keys.plan, keys.storable, keys.unid, keys.flatcall, keys.hexq
local sub = string.sub

local STATS, FINAL, PENDING, SEQ = {}, {}, {}, 0
for name in pairs(CHAINS) do STATS[name] = { requests = 0, hits = 0, misses = 0, stored = 0, bytes = 0, evictions = 0 } end
local store = Store.new(BUDGET, DATA.maxObject, STATS)
local STORE, ALIAS, get, put, alias = store.entries, store.aliases, store.get, store.put, store.alias

-- Lua starts a collection when its heap has doubled since the last one (pause 200), so garbage
-- could grow to the size of the cache itself; at 120 it stays within a fifth of it.
if _VERSION == 'Lua 5.3' then collectgarbage('setpause', 120) else collectgarbage('incremental', 120) end
local BIG = 256 * 1024

local HIT_HEADERS = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'HIT' } }
local JSON_HEADERS = { ['content-type'] = { 'application/json' } }
local POLL_HEADERS = { ['content-type'] = { 'application/json' }, ['user-agent'] = { POLL_AGENT } }

-- A request to a chain's node, through HAProxy's listener for the cache.
local function fetch(chain, body, headers, timeout)
  return core.httpclient():post{ url = FETCH.url .. chain, dst = FETCH.dst, body = body, headers = headers, timeout = timeout }
end

-- The key of one call on a chain, and its rule; nil when not cacheable.
local function key_of(chain, c, s, m)
  return plan(chain, RULES[c.kind], FINAL[chain], STORE, s, m)
end

-- A small hit is answered from here, without handing over to the service; a large one returns
-- the hand-over for the service.
local function answer(txn, st, e, id)
  if #e.pre + #e.post + #id <= REPLY_MAX then
    st.hits = st.hits + 1
    txn:done({ status = 200, headers = HIT_HEADERS, body = e.pre .. id .. e.post })
    return nil
  end
  return { hit = e, id = id }
end

local function reply(applet, status, body, state)
  applet:set_status(status)
  applet:add_header('content-type', 'application/json')
  applet:add_header('content-length', tostring(#body))
  if state then applet:add_header('x-cache', state) end
  applet:start_response()
  applet:send(body)
end

core.register_action('rpc_cache_lookup', { 'http-req' }, function(txn, chain)
  local c = CHAINS[chain]
  local st = STATS[chain]
  local s = txn.f:req_body() or ''
  local first = skip(s, 1)
  st.requests = st.requests + 1
  -- Aliases are kept for single calls only: a batch's cut body can never name one.
  local mk, ia, ib
  if s:sub(first, first) ~= '[' then mk, ia, ib = unid(s, chain) end
  local known = mk and ALIAS[mk]
  local token
  if known and STORE[known.key] == known then
    get(known.key)
    token = answer(txn, st, known, sub(s, ia, ib))
    if not token then return end
  end
  if s:sub(first, first) == '[' then
    local ok2, items, e = pcall(elements, s, first)
    if not ok2 or not items or #items == 0 or skip(s, e) <= #s then return end
    local parts = {}
    for i, it in ipairs(items) do
      local okm, m = pcall(members, s, it.a)
      local key = okm and key_of(chain, c, s, m)
      local hit = key and STORE[key]
      if not hit then return end
      parts[i] = { e = hit, id = s:sub(m.id.a, m.id.b) }
    end
    for _, p in ipairs(parts) do get(p.e.key) end
    token = { batch = parts }
  elseif not token then
    local m, e = flatcall(s, first)
    if not m then
      local okm
      okm, m, e = pcall(members, s, first)
      if not okm then return end
    end
    if not m or skip(s, e) <= #s then return end
    local key, rule = key_of(chain, c, s, m)
    if not key then return end
    local hit = get(key)
    -- The alias counts only where the id it cut out is the call's own.
    if mk and (ia ~= m.id.a or ib ~= m.id.b) then mk = nil end
    if hit then
      alias(hit, mk)
      token = answer(txn, st, hit, sub(s, m.id.a, m.id.b))
      if not token then return end
    else
      token = { key = key, rule = rule, body = s, mk = mk }
    end
  end
  SEQ = SEQ + 1
  token.at = core.now().sec
  PENDING[tostring(SEQ)] = token
  txn:set_var('txn.cache_tok', tostring(SEQ))
end, 1)

core.register_service('rpc_cache', 'http', function(applet)
  local tok = applet:get_var('txn.cache_tok')
  local chain = applet:get_var('txn.chain')
  local p = tok and PENDING[tok]
  if not p then return reply(applet, 500, DATA.errors.internal) end
  PENDING[tok] = nil
  local st = STATS[chain]
  if p.batch then
    local out = {}
    for i, x in ipairs(p.batch) do out[i] = x.e.pre .. x.id .. x.e.post end
    st.hits = st.hits + #out
    return reply(applet, 200, '[' .. table.concat(out, ',') .. ']', 'HIT')
  end
  if p.hit then
    st.hits = st.hits + 1
    return reply(applet, 200, p.hit.pre .. p.id .. p.hit.post, 'HIT')
  end
  st.misses = st.misses + 1
  local ok, res = pcall(fetch, chain, p.body, JSON_HEADERS, 60000)
  if not ok or not res or not res.status or res.status == 0 then
    return reply(applet, 502, DATA.errors.badGateway)
  end
  local body = res.body or ''
  if res.status == 200 then
    local okp, pre, post = pcall(storable, p.rule, FINAL[chain], body)
    if okp and pre then alias(put(chain, p.key, pre, post), p.mk) end
  end
  reply(applet, res.status, body, 'MISS')
  -- A big answer leaves several copies of itself as garbage (the client's buffer, the halves):
  -- collect them now rather than let the heap grow by a multiple of the budget first.
  if #body > BIG then body, res, p = nil, nil, nil; collectgarbage('collect') end
end)

-- Pending hand-overs whose service never ran (the client went away) are dropped after a minute.
local function sweep(now)
  for k, p in pairs(PENDING) do if now - p.at > 60 then PENDING[k] = nil end end
end

local function rpc(chain, method, params)
  local body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":' .. params .. '}'
  local res = fetch(chain, body, POLL_HEADERS, 10000)
  if not res or res.status ~= 200 then return nil end
  local b = res.body or ''
  local m = members(b, skip(b, 1))
  return m and m.result and b, m and m.result
end

local function poll(name, c)
  if c.kind == 'evm' then
    local b, r = rpc(name, 'eth_getBlockByNumber', '["finalized",false]')
    local rm = b and members(b, r.a)
    local n
    if rm and rm.number then _, n = hexq(b:sub(rm.number.a, rm.number.b)) end
    if not n and c.depth > 0 then
      -- No finalized tag on this node: a fixed depth below its head.
      local b2, r2 = rpc(name, 'eth_blockNumber', '[]')
      local head
      if b2 then _, head = hexq(b2:sub(r2.a, r2.b)) end
      n = head and head - c.depth
    end
    FINAL[name] = n and n >= 0 and n or nil
  elseif c.kind == 'starknet' then
    local b, r = rpc(name, 'starknet_getBlockWithTxHashes', '["l1_accepted"]')
    local rm = b and members(b, r.a)
    local raw = rm and rm.block_number and b:sub(rm.block_number.a, rm.block_number.b)
    FINAL[name] = raw and raw:match('^%d+$') and tonumber(raw) or nil
  end
end

core.register_task(function()
  while true do
    for name, c in pairs(CHAINS) do pcall(poll, name, c) end
    sweep(core.now().sec)
    core.msleep(POLL_MS)
  end
end)

core.register_service('rpc_cache_metrics', 'http', function(applet)
  local out = {
    '# HELP rpcstack_cache_budget_bytes Byte budget of the response cache (gateway.cache.maxBytes).',
    '# TYPE rpcstack_cache_budget_bytes gauge', 'rpcstack_cache_budget_bytes ' .. BUDGET,
    '# HELP rpcstack_cache_lua_memory_bytes Memory of the Lua state that holds the cache.',
    '# TYPE rpcstack_cache_lua_memory_bytes gauge', string.format('rpcstack_cache_lua_memory_bytes %d', math.floor(collectgarbage('count') * 1024)),
  }
  local series = {
    { 'requests_total', 'counter', 'requests', 'JSON-RPC POSTs naming a cacheable method (the calls the cache looks at).' },
    { 'hits_total', 'counter', 'hits', 'Calls answered from the cache.' },
    { 'misses_total', 'counter', 'misses', 'Cacheable calls fetched from the node.' },
    { 'evictions_total', 'counter', 'evictions', 'Entries dropped to stay within the budget.' },
    { 'entries', 'gauge', 'stored', 'Answers held.' },
    { 'bytes', 'gauge', 'bytes', 'Bytes held, counted against the budget.' },
  }
  for _, x in ipairs(series) do
    out[#out + 1] = '# HELP rpcstack_cache_' .. x[1] .. ' ' .. x[4]
    out[#out + 1] = '# TYPE rpcstack_cache_' .. x[1] .. ' ' .. x[2]
    for name, st in pairs(STATS) do out[#out + 1] = string.format('rpcstack_cache_%s{chain="%s"} %d', x[1], name, st[x[3]]) end
  end
  local body = table.concat(out, '\n') .. '\n'
  applet:set_status(200)
  applet:add_header('content-type', 'text/plain; version=0.0.4')
  applet:add_header('content-length', tostring(#body))
  applet:start_response()
  applet:send(body)
end)
