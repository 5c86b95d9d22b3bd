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
-- - reads at the head (rpcstack/cache_merge.lua: eth_blockNumber, eth_call at latest, ...) are not
--   kept, but identical ones in flight share one fetch while the gateway has seen no newer head.
-- - a task polls each chain's final block (Ethereum `finalized`, Starknet `l1_accepted`) and
--   checks that the node still holds the chain the store holds; if not, the chain's entries go.
-- - service rpc_cache_metrics: Prometheus text for the private metrics port.
-- The httpclient reaches the nodes through HAProxy's own listener for it (fetch.dst), which hands
-- each chain's requests to its relay backend: no node URL is known here.
-- One Lua state (lua-load) serves all threads, so the store and its budget are global. The
-- chains, rules and budgets come from the stack's generated data (gateway_data.lua).
-- The parts: rpcstack/cache_keys.lua (keys and what may be kept), cache_store.lua (the store),
-- cache_flights.lua (misses in flight and hand-overs), cache_poll.lua (the poll of each chain),
-- cache_live.lua and cache_metrics.lua (what is said of it); here only what needs HAProxy.
local DATA = require('gateway_data').cache
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'
local Store = require 'rpcstack.cache_store'
local Flights = require 'rpcstack.cache_flights'
local Poll = require 'rpcstack.cache_poll'
local Merge = require 'rpcstack.cache_merge'
local metrics = require 'rpcstack.cache_metrics'
local sign = require('rpcstack.internal').signer(core.get_var)

local CHAINS, RULES, BUDGET, REPLY_MAX = DATA.chains, DATA.rules, DATA.budget, DATA.replyMax
local POLL_MS, FETCH = DATA.pollMs, DATA.fetch
local skip = json.skip
local read, storable, split, unid = keys.read, keys.storable, keys.split, keys.unid
local mergeable, head_of = Merge.mergeable, Merge.head_of
local byte, sub = string.byte, string.sub

local STATS, MERGES = {}, {}
for name in pairs(CHAINS) do
  STATS[name] = { requests = 0, hits = 0, misses = 0, stored = 0, bytes = 0, evictions = 0,
                  coalesced = 0, bypassed = 0, changes = 0, merge_fetches = 0 }
  -- The merge's own counts, taken by the flights as a cache's are.
  MERGES[name] = { coalesced = 0, bypassed = 0, alone = 0 }
end
local HEADS = Merge.heads()
local lanes = Merge.lanes()
local store = Store.new(BUDGET, DATA.maxObject, STATS)
local STORE, ALIAS, get, put, alias = store.entries, store.aliases, store.get, store.put, store.alias
-- Each chain as the key functions see it; the poll task keeps its final block up to date.
local VIEW = {}
for name, c in pairs(CHAINS) do
  VIEW[name] = { name = name, rules = RULES[c.kind], ids = keys.IDS[DATA.ids[c.kind]], stored = STORE,
                 merge = DATA.merge[c.kind] }
end

-- Lua starts a collection when its heap has doubled since the last one (pause 200), so garbage
-- could grow to the size of the cache itself; at 120 it stays within a fifth of it.
if _VERSION == 'Lua 5.3' then collectgarbage('setpause', 120) else collectgarbage('incremental', 120) end
local BIG = 256 * 1024

local HIT_HEADERS = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'HIT' } }
local JSON_HEADERS = { ['content-type'] = { 'application/json' } }

-- A request to a chain's node, through HAProxy's listener for the cache.
local function fetch(chain, body, headers, timeout)
  local req = { url = FETCH.url .. chain, dst = FETCH.dst, body = body, headers = sign(headers), timeout = timeout }
  return core.httpclient():post(req)
end

local flights = Flights.new({
  max = FETCH.max, bytes = FETCH.bytes, max_object = DATA.maxObject, reply_max = REPLY_MAX,
  timeout = DATA.errors.timeout,
  now_ms = function()
    local t = core.now()
    return t.sec * 1000 + t.usec // 1000
  end,
  sleep = function(ms) core.msleep(ms) end,
  -- Woken as the flight lands (HAProxy 2.9 and later: Queue.alarm, core.wait); else polled.
  wait = core.queue and function(f, ms)
    if not f.q then f.q = core.queue() end
    f.q:alarm()
    core.wait(ms)
  end or nil,
  wake = function(f) if f.q then f.q:push(true) end end,
})

-- Each change of a chain's state is logged, and rpcstack_cache_live says it (rpcstack/cache_live.lua).
local live = require('rpcstack.cache_live').new(function(level, text) core.log(core[level], text) end)
local poll = Poll.new({
  chains = CHAINS, view = VIEW, stats = STATS, agent = DATA.pollAgent, fetch = fetch,
  drop = function(name)
    store.flush(name)
    flights.forget(name)
  end,
  report = function(name, ok, why) live:report(name, ok, why) end,
})
local LIVE, EPOCH = poll.live, poll.epoch
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

-- A read at the head: identical calls in flight share one fetch (rpcstack/cache_merge.lua). The
-- answers to head calls taken here are heads the merge sees, and so are those of head calls sent
-- to the node alone (rpc_cache_head reads them on the way back); one that goes to the node another
-- way (no place among the fetches, an older head than known) keeps txn.head_call, and HAProxy
-- counts its answer in proc.rpc_heads_unseen, which stops every flight sent before from being
-- shared further, as a newer head does.
local KNOWN, KNOWN_N = {}, 0
local function share(txn, chain, view, s, mk, ia, ib, owner)
  -- Bodies that differ only in their id are read alike: each is read once (at most 4096 kept).
  local k = KNOWN[mk]
  if k == nil then
    local method, how, a, b = mergeable(view, s)
    k = method and a == ia and b == ib and { method = method, how = how } or false
    KNOWN_N = KNOWN_N + 1
    if KNOWN_N > 4096 then KNOWN, KNOWN_N = {}, 1 end
    KNOWN[mk] = k
  end
  if not k then return nil end
  local method, how = k.method, k.how
  local m = MERGES[chain]
  local epoch = EPOCH[chain] .. ':' .. HEADS.seq(chain) .. ':' .. (txn:get_var('proc.rpc_heads_unseen') or 0)
  -- The alias names the chain and holds a '{': never a cache key (chain|method|args).
  local key = mk
  -- A fetch costs more than a relay: a read nobody joined last time goes to the node alone.
  if not flights.joinable(key, epoch) and not lanes.lead(key) then
    m.alone = m.alone + 1
    -- Its answer's head is read on the way back (rpc_cache_head) rather than counted unseen.
    if how ~= true then txn:set_var('txn.head_read', how) end
    return nil
  end
  local bypassed = m.bypassed
  txn:unset_var('txn.head_call')
  local x = { key = key, class = method, floor = HEADS.head(chain) }
  local token = flights.miss(txn, m, epoch, x, s, sub(s, ia, ib), nil, owner)
  if token then
    token.how = how
  elseif m.bypassed ~= bypassed and how ~= true then
    txn:set_var('txn.head_call', true)
  end
  return token
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
    if not r then
      token = mk and share(txn, chain, view, s, mk, ia, ib, owner)
      if not token then return end
    elseif r.batch then
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
        token = flights.miss(txn, st, EPOCH[chain], x, s, id, mk, owner)
      end
      if not token then return end
    end
  end
  txn:set_var('txn.cache_tok', flights.hand(token, core.now().sec))
end, 1)

-- The answer to a head read share() sent to the node alone: the head it shows is seen as a fetch's
-- is, so it stops earlier fetches from being shared only when it is newer than any seen. One whose
-- head cannot be read keeps txn.head_call and is counted unseen.
core.register_action('rpc_cache_head', { 'http-res' }, function(txn)
  if txn.f:status() ~= 200 then return end
  local n = head_of(txn:get_var('txn.head_read'), txn.f:res_body() or '')
  if n then
    HEADS.see(txn:get_var('txn.chain'), n)
    txn:unset_var('txn.head_call')
  end
end)

-- Fetches p's call as the leader of its flight (its place among the fetches is p.slot) and keeps
-- the answer when it may; answers the service's client.
local function lead(applet, chain, st, p)
  local f = p.flight
  if p.how then st.merge_fetches = st.merge_fetches + 1 else st.misses = st.misses + 1 end
  local ok, res = pcall(fetch, chain, p.body, JSON_HEADERS, 60000)
  local status, body, pre, post
  if not ok or not res or not res.status or res.status == 0 then
    status, body = 502, DATA.errors.badGateway
  else
    status, body = res.status, res.body or ''
    flights.learn(p.class, #body)
    -- Kept only if the chain is still the one this fetch began on.
    if p.rule and status == 200 and LIVE[chain] and EPOCH[chain] == p.epoch then
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
  local head = p.how and p.how ~= true and status == 200 and head_of(p.how, body) or nil
  HEADS.see(chain, head)
  if p.how then lanes.landed(p.key, f.waiters > 0) end
  flights.land(p, status, body, pre, post, head)
  local big = #body > BIG
  body, res = nil, nil -- luacheck: ignore 311
  if big then collectgarbage('collect') end
  reply(applet, status, parts, 'MISS')
end

core.register_service('rpc_cache', 'http', function(applet)
  local tok = applet:get_var('txn.cache_tok')
  local chain = applet:get_var('txn.chain')
  local p = flights.take(tok)
  if not p then return reply(applet, 500, { DATA.errors.internal }) end
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

core.register_task(function()
  while true do
    poll.round()
    flights.sweep(core.now().sec)
    core.msleep(POLL_MS)
  end
end)

core.register_service('rpc_cache_metrics', 'http', function(applet)
  for name, m in pairs(MERGES) do
    STATS[name].merged, STATS[name].merge_bypassed, STATS[name].merge_alone = m.coalesced, m.bypassed, m.alone
  end
  local body = metrics.text({ budget = BUDGET, fetch_max = FETCH.max, running = flights.running(),
                              live = live:lines(CHAINS), stats = STATS })
  applet:set_status(200)
  applet:add_header('content-type', 'text/plain; version=0.0.4')
  applet:add_header('content-length', tostring(#body))
  applet:start_response()
  applet:send(body)
end)
