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
--   as sent between the two halves, so `result` stays byte-equal and the id exact. One fetch per
--   key at a time (identical misses wait for it), and a bounded number at once.
-- - a task polls each chain's final block (Ethereum `finalized`, Starknet `l1_accepted`) and
--   checks that the node still holds the chain the store holds; if not, the chain's entries go.
-- - service rpc_cache_metrics: Prometheus text for the private metrics port.
-- The httpclient reaches the nodes through HAProxy's own listener for it (fetch.dst), which hands
-- each chain's requests to its relay backend: no node URL is known here.
-- One Lua state (lua-load) serves all threads, so the store and its budget are global. The
-- chains, rules and budgets come from the stack's generated data (gateway_data.lua).
local DATA = require('gateway_data').cache
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'
local Store = require 'rpcstack.cache_store'

local CHAINS, RULES, BUDGET, REPLY_MAX = DATA.chains, DATA.rules, DATA.budget, DATA.replyMax
local POLL_MS, POLL_AGENT, FETCH = DATA.pollMs, DATA.pollAgent, DATA.fetch
local skip, members = json.skip, json.members
local read, storable, split, unid, hexq = keys.read, keys.storable, keys.split, keys.unid, keys.hexq
local byte, sub = string.byte, string.sub

local STATS, PENDING, SEQ = {}, {}, 0
-- Per chain, from its polls: ANCHOR the block the chain is known by, { n, h }; LIVE whether the
-- last poll found the chain the store holds (until then nothing is answered or kept); EPOCH how
-- often its entries were dropped (a fetch begun before is not kept).
local ANCHOR, LIVE, EPOCH = {}, {}, {}
for name in pairs(CHAINS) do
  STATS[name] = { requests = 0, hits = 0, misses = 0, stored = 0, bytes = 0, evictions = 0,
                  coalesced = 0, bypassed = 0, changes = 0 }
  EPOCH[name] = 0
end
local store = Store.new(BUDGET, DATA.maxObject, STATS)
local STORE, ALIAS, get, put, alias = store.entries, store.aliases, store.get, store.put, store.alias
-- Each chain as the key functions see it; the poll task keeps its final block up to date.
local VIEW = {}
for name, c in pairs(CHAINS) do
  VIEW[name] = { name = name, rules = RULES[c.kind], ids = keys.IDS[DATA.ids[c.kind]], stored = STORE }
end

-- Lua starts a collection when its heap has doubled since the last one (pause 200), so garbage
-- could grow to the size of the cache itself; at 120 it stays within a fifth of it.
if _VERSION == 'Lua 5.3' then collectgarbage('setpause', 120) else collectgarbage('incremental', 120) end
local BIG = 256 * 1024

local HIT_HEADERS = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'HIT' } }
local JSON_HEADERS = { ['content-type'] = { 'application/json' } }
local POLL_HEADERS = { ['content-type'] = { 'application/json' }, ['user-agent'] = { POLL_AGENT } }

local function now_ms()
  local t = core.now()
  return t.sec * 1000 + t.usec // 1000
end

-- A request to a chain's node, through HAProxy's listener for the cache.
local function fetch(chain, body, headers, timeout)
  local req = { url = FETCH.url .. chain, dst = FETCH.dst, body = body, headers = headers, timeout = timeout }
  return core.httpclient():post(req)
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

-- Sends the parts one after the other: a big answer is not copied once more to splice an id in.
local function reply(applet, status, parts, state)
  local n = 0
  for _, x in ipairs(parts) do n = n + #x end
  applet:set_status(status)
  applet:add_header('content-type', 'application/json')
  applet:add_header('content-length', tostring(n))
  if state then applet:add_header('x-cache', state) end
  applet:start_response()
  for _, x in ipairs(parts) do applet:send(x) end
end

-- Misses in flight. FLIGHTS: the one fetch per key ({ key, epoch, waiters, and once done: status,
-- body, pre, post }); identical misses wait for it (in the lookup action, where a call holds its
-- request's buffer only). At most FETCH.max fetches run at once, holding at most FETCH.bytes of
-- answers as estimated per method (EST: the size of its last answers, halving back from the
-- largest); a miss that finds no place goes to the node as without the cache (BYPASS counts them),
-- so memory in flight stays bounded however many clients miss at once.
local FLIGHTS, EST = {}, {}
local RUNNING, RESERVED = 0, 0
local WAIT_MS, WAIT_LIMIT_MS, LEADER_LOST_MS = 5, 70000, 1000

-- A leader's place among the fetches, given back by release(), by the sweep of hand-overs whose
-- service never ran, or by the collector once the coroutine holding it is dropped (its client
-- went away: HAProxy drops the coroutine unfinished).
local function release(slot)
  if slot.held then
    slot.held = false
    RUNNING, RESERVED = RUNNING - 1, RESERVED - slot.bytes
  end
  local f = slot.flight
  if not f.done then f.gone = true end
  if FLIGHTS[f.key] == f then FLIGHTS[f.key] = nil end
end
local SLOT = { __gc = release }

-- Whoever has waited over LEADER_LOST_MS for an identical call's fetch runs the collector, at most
-- once in that time: a dropped leader's place and flight come back then.
local LAST_COLLECT = 0
local function collect_lost(since)
  local now = now_ms()
  if now - since > LEADER_LOST_MS and now - LAST_COLLECT > LEADER_LOST_MS then
    LAST_COLLECT = now
    collectgarbage('collect')
  end
end

-- Answers of one method (and its boolean arguments, such as full transactions) are alike in size.
local function class_of(key, rule)
  local parts, out = {}, {}
  for x in key:gmatch('[^|]+') do parts[#parts + 1] = x end
  out[1], out[2] = parts[1], parts[2]
  for i, kind in ipairs(rule.args) do
    if kind == 'bool' then out[#out + 1] = parts[2 + i] end
  end
  return table.concat(out, '|')
end

-- A place among the fetches for flight f, if one is free now.
local function place(f, class)
  local est = EST[class] or DATA.maxObject
  if RUNNING > 0 and (RUNNING >= FETCH.max or RESERVED + est > FETCH.bytes) then return nil end
  RUNNING, RESERVED = RUNNING + 1, RESERVED + est
  return setmetatable({ flight = f, held = true, bytes = est }, SLOT)
end

-- Waits for the flight of an identical call: the flight once done, nil when its leader is gone
-- (this call leads then), 'timeout' after WAIT_LIMIT_MS.
local function await(f)
  f.waiters = f.waiters + 1
  local since = now_ms()
  while not f.done and not f.gone do
    if now_ms() - since > WAIT_LIMIT_MS then return 'timeout' end
    collect_lost(since)
    core.msleep(WAIT_MS)
  end
  return f.done and f or nil
end

local COALESCED_HEADERS = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'COALESCED' } }

-- A miss (call x, id as sent): answered here or handed over with the answer of an identical call
-- in flight, else handed over to fetch if a place is free; nil when answered here or left to the
-- node.
local function miss(txn, st, chain, x, s, id, mk, owner)
  local epoch = EPOCH[chain]
  while true do
    local f = FLIGHTS[x.key]
    if not f or f.epoch ~= epoch or f.gone then break end
    local done = await(f)
    if done == 'timeout' then
      txn:done({ status = 504, headers = JSON_HEADERS, body = DATA.errors.timeout })
      return nil
    end
    if done then
      st.coalesced = st.coalesced + 1
      if done.pre and #done.pre + #id + #done.post <= REPLY_MAX then
        txn:done({ status = done.status, headers = COALESCED_HEADERS, body = done.pre .. id .. done.post })
        return nil
      end
      return { coalesced = done, id = id }
    end
  end
  local f = { key = x.key, epoch = epoch, waiters = 0 }
  local class = class_of(x.key, x.rule)
  local slot = place(f, class)
  if not slot then
    st.bypassed = st.bypassed + 1
    return nil
  end
  FLIGHTS[x.key] = f
  return { key = x.key, rule = x.rule, block = x.at, body = s, mk = mk, id = id, owner = owner, epoch = epoch,
           class = class, flight = f, slot = slot }
end

core.register_action('rpc_cache_lookup', { 'http-req' }, function(txn, chain)
  local st = STATS[chain]
  st.requests = st.requests + 1
  if not LIVE[chain] then return end
  local view = VIEW[chain]
  local owner = txn:get_var('txn.keyname')
  local s = txn.f:req_body() or ''
  local batch = byte(s, skip(s, 1)) == 91
  -- Aliases are kept for single calls only: a batch's cut body can never name one.
  local mk, ia, ib
  if not batch then mk, ia, ib = unid(view, s) end
  local known = mk and ALIAS[mk]
  -- The repeated body stands for the same call: the same test of finality as when it was read.
  if known and known.block and not (view.final and known.block <= view.final) then known = nil end
  local token
  if known and STORE[known.key] == known then
    get(known.key, owner)
    token = answer(txn, st, known, sub(s, ia, ib))
    if not token then return end
  else
    local r = read(view, s)
    if not r then return end
    if r.batch then
      local parts = {}
      for i, x in ipairs(r.calls) do
        local hit = STORE[x.key]
        if not hit then return end
        parts[i] = { e = hit, id = sub(s, x.ida, x.idb) }
      end
      for _, p in ipairs(parts) do get(p.e.key, owner) end
      token = { batch = parts }
    else
      local x = r.calls[1]
      local hit = get(x.key, owner)
      -- The alias counts only where the id it cut out is the call's own.
      if mk and (ia ~= x.ida or ib ~= x.idb) then mk = nil end
      local id = sub(s, x.ida, x.idb)
      if hit then
        alias(hit, mk)
        token = answer(txn, st, hit, id)
      else
        token = miss(txn, st, chain, x, s, id, mk, owner)
      end
      if not token then return end
    end
  end
  SEQ = SEQ + 1
  token.at = core.now().sec
  PENDING[tostring(SEQ)] = token
  txn:set_var('txn.cache_tok', tostring(SEQ))
end, 1)

-- Fetches p's call as the leader of its flight (its place among the fetches is p.slot) and keeps
-- the answer when it may; answers the service's client.
local function lead(applet, chain, st, p)
  local f = p.flight
  st.misses = st.misses + 1
  local ok, res = pcall(fetch, chain, p.body, JSON_HEADERS, 60000)
  local status, body, pre, post
  if not ok or not res or not res.status or res.status == 0 then
    status, body = 502, DATA.errors.badGateway
  else
    status, body = res.status, res.body or ''
    EST[p.class] = math.max(#body, (EST[p.class] or DATA.maxObject) // 2)
    -- Kept only if the chain is still the one this fetch began on.
    if status == 200 and LIVE[chain] and EPOCH[chain] == p.epoch then
      local okp, a, b = pcall(storable, VIEW[chain], p.rule, body)
      if okp and a then
        pre, post = a, b
        local e = put(chain, p.key, pre, post, p.owner)
        if e then e.block = p.block end
        alias(e, p.mk)
      end
    end
  end
  if not pre and f.waiters > 0 then pre, post = split(body) end
  -- Cut, the answer is sent as its halves around the node's own id: the whole text is garbage
  -- from here, collected before a reply that may take long rather than while the heap grows.
  local parts = pre and { pre, sub(body, #pre + 1, #body - #post), post } or { body }
  f.status, f.body, f.pre, f.post, f.done = status, not pre and body or nil, pre, post, true
  release(p.slot)
  local big = #body > BIG
  body, res = nil, nil -- luacheck: ignore 311
  if big then collectgarbage('collect') end
  reply(applet, status, parts, 'MISS')
end

core.register_service('rpc_cache', 'http', function(applet)
  local tok = applet:get_var('txn.cache_tok')
  local chain = applet:get_var('txn.chain')
  local p = tok and PENDING[tok]
  if not p then return reply(applet, 500, { DATA.errors.internal }) end
  PENDING[tok] = nil
  local st = STATS[chain]
  if p.batch then
    local out = {}
    for i, x in ipairs(p.batch) do out[i] = x.e.pre .. x.id .. x.e.post end
    st.hits = st.hits + #out
    return reply(applet, 200, { '[' .. table.concat(out, ',') .. ']' }, 'HIT')
  end
  if p.hit then
    st.hits = st.hits + 1
    return reply(applet, 200, { p.hit.pre, p.id, p.hit.post }, 'HIT')
  end
  local f = p.coalesced
  if f then return reply(applet, f.status, f.pre and { f.pre, p.id, f.post } or { f.body }, 'COALESCED') end
  lead(applet, chain, st, p)
end)

-- Hand-overs whose service never ran (the client went away in between) are dropped, with the
-- place among the fetches one may hold: the service runs right after the action that hands over.
local function sweep(now)
  for k, p in pairs(PENDING) do
    if now - p.at > 10 then
      if p.slot then release(p.slot) end
      PENDING[k] = nil
    end
  end
end

-- One call of the cache's own; the answer's text and its result's span (nil: the node answered
-- with an error). Raises when the node cannot be reached or answers no JSON-RPC.
local function rpc(chain, method, params)
  local body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":' .. params .. '}'
  local res = fetch(chain, body, POLL_HEADERS, 10000)
  if not res or res.status ~= 200 then error('HTTP ' .. tostring(res and res.status or 'none'), 0) end
  local b = res.body or ''
  local m = members(b, skip(b, 1))
  if not m then error('not a JSON-RPC answer', 0) end
  return b, m.result
end

-- How each kind names a block by tag or number, and where its number and hash are.
local BLOCKS = {
  evm = {
    method = 'eth_getBlockByNumber', final = '"finalized"', number = 'number', hash = 'hash',
    params = function(id) return '[' .. id .. ',false]' end,
    at = function(n) return string.format('"0x%x"', n) end,
    read = function(raw) local _, n = hexq(raw); return n end,
  },
  starknet = {
    method = 'starknet_getBlockWithTxHashes', final = '"l1_accepted"', number = 'block_number', hash = 'block_hash',
    params = function(id) return '[' .. id .. ']' end,
    at = function(n) return '{"block_number":' .. n .. '}' end,
    read = function(raw) return raw:match('^%d+$') and tonumber(raw) end,
  },
}

-- The number and hash of the block `id` names; nil when the node has none.
local function block(chain, kind, id)
  local k = BLOCKS[kind]
  local b, r = rpc(chain, k.method, k.params(id))
  local rm = r and members(b, r.a)
  if not rm or not rm[k.number] or not rm[k.hash] then return nil end
  local n = k.read(b:sub(rm[k.number].a, rm[k.number].b))
  return n, n and b:sub(rm[k.hash].a, rm[k.hash].b)
end

-- The final block: the node's finality tag, else (evm) a fixed depth below its head.
local function final_block(name, c)
  local k = BLOCKS[c.kind]
  local n, h = block(name, c.kind, k.final)
  if not n and c.depth > 0 then
    local b, r = rpc(name, 'eth_blockNumber', '[]')
    local _, head = hexq(r and b:sub(r.a, r.b) or '')
    if head and head >= c.depth then n, h = block(name, c.kind, k.at(head - c.depth)) end
  end
  return n, h
end

-- The node holds another chain than the store: a node started afresh (geth --dev keeps its chain
-- in memory, so a restart begins a new one) or replaced. Its entries go; a fetch begun before is
-- not kept, and no call joins one.
local function changed(name)
  store.flush(name)
  EPOCH[name] = EPOCH[name] + 1
  STATS[name].changes = STATS[name].changes + 1
  for key, f in pairs(FLIGHTS) do
    if key:sub(1, #name + 1) == name .. '|' then f.epoch = -1 end
  end
end

-- The chain is known by a block that was final (genesis while none is): the anchor. Each poll
-- reads the final block and asks for the anchor's number again; another hash there (or none) is
-- another chain. A final block below the anchor on the same chain (a node fault, or a reorg of
-- the head under a fixed depth) leaves the anchor where it was, and what is held stays true
-- (every entry is at or below the anchor, on the chain the anchor's hash fixes).
local function poll(name, c)
  local k = BLOCKS[c.kind]
  local final, h = final_block(name, c)
  local n = final
  if not n then n, h = block(name, c.kind, k.at(0)) end
  if not n then error('no block to know the chain by', 0) end
  local a = ANCHOR[name]
  if a then
    local then_hash = h
    if n ~= a.n then
      local _, ah = block(name, c.kind, k.at(a.n))
      then_hash = ah
    end
    if then_hash ~= a.h then
      changed(name)
      a = nil
    end
  end
  if not a or n >= a.n then ANCHOR[name] = { n = n, h = h } end
  VIEW[name].final = final
  LIVE[name] = true
end

-- Each change of a chain's state is logged, and rpcstack_cache_live says it (rpcstack/cache_live.lua).
local live = require('rpcstack.cache_live').new(function(level, text) core.log(core[level], text) end)
core.register_task(function()
  while true do
    for name, c in pairs(CHAINS) do
      local ok, why = pcall(poll, name, c)
      if not ok then LIVE[name] = false end
      live:report(name, ok, why)
    end
    sweep(core.now().sec)
    core.msleep(POLL_MS)
  end
end)

core.register_service('rpc_cache_metrics', 'http', function(applet)
  local out = {
    '# HELP rpcstack_cache_budget_bytes Byte budget of the response cache (gateway.cache.maxBytes).',
    '# TYPE rpcstack_cache_budget_bytes gauge', 'rpcstack_cache_budget_bytes ' .. BUDGET,
    '# HELP rpcstack_cache_lua_memory_bytes Memory of the Lua state that holds the cache.',
    '# TYPE rpcstack_cache_lua_memory_bytes gauge',
    string.format('rpcstack_cache_lua_memory_bytes %d', math.floor(collectgarbage('count') * 1024)),
    '# HELP rpcstack_cache_fetches Misses being fetched from the nodes now (at most ' .. FETCH.max .. ').',
    '# TYPE rpcstack_cache_fetches gauge', 'rpcstack_cache_fetches ' .. RUNNING,
  }
  for _, line in ipairs(live:lines(CHAINS)) do out[#out + 1] = line end
  local series = {
    { 'requests_total', 'counter', 'requests',
      'JSON-RPC POSTs naming a cacheable method (the calls the cache looks at).' },
    { 'hits_total', 'counter', 'hits', 'Calls answered from the cache.' },
    { 'misses_total', 'counter', 'misses', 'Cacheable calls fetched from the node.' },
    { 'coalesced_total', 'counter', 'coalesced',
      'Calls answered with the answer to an identical call in flight: node calls saved.' },
    { 'bypassed_total', 'counter', 'bypassed',
      'Cacheable misses relayed to the node as without the cache: every place among the fetches was taken.' },
    { 'chain_changes_total', 'counter', 'changes',
      'Times the node held another chain than the cache held (another hash at a final block): its entries went.' },
    { 'evictions_total', 'counter', 'evictions', 'Entries dropped to stay within the budget.' },
    { 'entries', 'gauge', 'stored', 'Answers held.' },
    { 'bytes', 'gauge', 'bytes', 'Bytes held, counted against the budget.' },
  }
  for _, x in ipairs(series) do
    out[#out + 1] = '# HELP rpcstack_cache_' .. x[1] .. ' ' .. x[4]
    out[#out + 1] = '# TYPE rpcstack_cache_' .. x[1] .. ' ' .. x[2]
    for name, st in pairs(STATS) do
      out[#out + 1] = string.format('rpcstack_cache_%s{chain="%s"} %d', x[1], name, st[x[3]])
    end
  end
  local body = table.concat(out, '\n') .. '\n'
  applet:set_status(200)
  applet:add_header('content-type', 'text/plain; version=0.0.4')
  applet:add_header('content-length', tostring(#body))
  applet:start_response()
  applet:send(body)
end)
