/**
 * The Lua half of the response cache (cache.lua). HAProxy 2.6 and 3.2 both provide every call
 * used here (checked in doc/lua-api/index.rst at v2.6.0 and v3.2.0): core.register_action,
 * core.register_service ("http"), core.register_task, core.httpclient (post{url, body, headers,
 * timeout}; "able to send and receive more than an HAProxy bufsize"), core.msleep, core.now.
 *
 * - action rpc_cache_lookup (http-req, after the policy, key and rate checks): reads the body,
 *   works out a canonical key per call; a single call with a key, or a batch whose every call
 *   hits, is handed to the service through txn.cache_tok; anything else goes to the node as before.
 * - service rpc_cache: answers hits from memory, fetches misses itself with the httpclient (so
 *   answers of any size are stored and streamed without raising tune.bufsize) and stores final
 *   answers. The stored text is the node's, cut around its id: a hit splices the request's id
 *   as sent between the two halves, so `result` stays byte-equal and the id exact.
 * - a task polls each chain's final block (Ethereum `finalized`, Starknet `l1_accepted`).
 * - service rpc_cache_metrics: Prometheus text for the private metrics port.
 * One Lua state (lua-load) serves all threads, so the store and its budget are global.
 */
import { JSON_LUA, JSON_SPANS_LUA } from "./luaJson.js";

export const CACHE_LUA = String.raw`
${JSON_LUA}
${JSON_SPANS_LUA}
local BYTES, COUNT, HEAD, TAIL, STORE, PENDING, SEQ = 0, 0, nil, nil, {}, {}, 0
local FINAL = {}
-- A stored entry costs its text plus this much for its key, tables and list links (measured
-- with collectgarbage('count') on Lua 5.3: about 180 bytes an entry beyond the strings).
local OVERHEAD = 256
local BIG = 256 * 1024
for name in pairs(CHAINS) do STATS[name] = { requests = 0, hits = 0, misses = 0, stored = 0, bytes = 0, evictions = 0 } end

local function unlink(e)
  if e.prev then e.prev.next = e.next else HEAD = e.next end
  if e.next then e.next.prev = e.prev else TAIL = e.prev end
  e.prev, e.next = nil, nil
end

local function push(e)
  e.next = HEAD
  if HEAD then HEAD.prev = e end
  HEAD = e
  if not TAIL then TAIL = e end
end

-- Aliases: a body with its id cut out -> the entry it asks for. Without a backslash no string can
-- hold a quote, so the text outside the id fixes the call, and a body equal to one already read
-- in full (but for its id) needs no second reading. Each entry keeps a few, counted in its size.
local ALIAS, ALIASES_PER_ENTRY = {}, 4

local function drop(e, evicted)
  unlink(e)
  STORE[e.key] = nil
  for _, a in ipairs(e.aliases) do ALIAS[a] = nil end
  BYTES, COUNT = BYTES - e.size, COUNT - 1
  local st = STATS[e.chain]
  st.stored, st.bytes = st.stored - 1, st.bytes - e.size
  if evicted then st.evictions = st.evictions + 1 end
end

local function put(chain, key, pre, post)
  local size = #key + #pre + #post + OVERHEAD
  if size > MAX_OBJECT or size > BUDGET then return nil end
  local old = STORE[key]
  if old then drop(old, false) end
  while BYTES + size > BUDGET and TAIL do drop(TAIL, true) end
  local e = { key = key, pre = pre, post = post, size = size, chain = chain, aliases = {} }
  STORE[key] = e
  push(e)
  BYTES, COUNT = BYTES + size, COUNT + 1
  local st = STATS[chain]
  st.stored, st.bytes = st.stored + 1, st.bytes + size
  return e
end

local function alias(e, mk)
  if not e or not mk or ALIAS[mk] or #e.aliases >= ALIASES_PER_ENTRY or STORE[e.key] ~= e then return end
  local add = #mk + OVERHEAD
  while BYTES + add > BUDGET and TAIL and TAIL ~= e do drop(TAIL, true) end
  if BYTES + add > BUDGET then return end
  e.aliases[#e.aliases + 1] = mk
  ALIAS[mk] = e
  e.size, BYTES = e.size + add, BYTES + add
  STATS[e.chain].bytes = STATS[e.chain].bytes + add
end

-- The body with its id cut out, and the id's span; nil when the body has a backslash or an id
-- that is not a plain number, string or null.
local function unid(s, chain)
  if find(s, '\\', 1, true) then return nil end
  local _, e = find(s, '[{,]%s*"id"%s*:%s*')
  if not e then return nil end
  local a, b = e + 1, nil
  if byte(s, a) == 34 then
    _, b = find(s, '^"[^"%c]*"', a)
  elseif sub(s, a, a + 3) == 'null' then
    b = a + 3
  elseif not find(s, '^-?0%d', a) then
    _, b = find(s, '^-?%d+', a)
    local _, f = find(s, '^%.%d+', (b or a) + 1)
    if b and f then b = f end
    local _, g = find(s, '^[eE][-+]?%d+', (b or a) + 1)
    if b and g then b = g end
  end
  if not b then return nil end
  -- The chain (no "|" in a chain path) is part of the alias: the same call on another chain is another entry.
  return chain .. '|' .. sub(s, 1, a - 1) .. '\0' .. sub(s, b + 1), a, b
end

local function get(key)
  local e = STORE[key]
  if e and e ~= HEAD then unlink(e); push(e) end
  return e
end

local HIT_HEADERS = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'HIT' } }

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

-- Canonical forms of the arguments a rule names; nil: not cacheable (the node decides).
local function hexq(raw)
  local h = raw:match('^"0x(%x+)"$')
  if not h or (#h > 1 and h:sub(1, 1) == '0') or #h > 13 then return nil end
  return h:lower(), tonumber(h, 16)
end
local CANON = {
  -- geth rejects leading zeros in quantities (hexutil: ErrLeadingZero): such spellings go to the node.
  qty = function(raw) local h, n = hexq(raw); return h and ('0x' .. h), n end,
  bool = function(raw) return (raw == 'true' or raw == 'false') and raw or nil end,
  hash = function(raw) local h = raw:match('^"0x(%x+)"$'); return h and #h == 64 and ('0x' .. h:lower()) or nil end,
  -- Felts as the Starknet spec writes them: 0x and up to 63 digits, no leading zero.
  felt = function(raw)
    local h = raw:match('^"0x(%x+)"$')
    if not h or #h > 64 or (#h > 1 and h:sub(1, 1) == '0') then return nil end
    return '0x' .. h:lower()
  end,
  block = function(raw, s, a)
    local m = members(s, a)
    if not m then return nil end
    local n, key = 0, nil
    for k, v in pairs(m) do
      n = n + 1
      local r = s:sub(v.a, v.b)
      if v.k == 'block_number' and (r == '0' or r:match('^[1-9]%d*$')) and #r < 16 then key = 'n' .. r
      elseif v.k == 'block_hash' then local h = CANON.felt(r); key = h and ('h' .. h) end
    end
    if n ~= 1 or not key then return nil end
    return key, key:sub(1, 1) == 'n' and tonumber(key:sub(2)) or nil
  end,
}

-- The common body is one flat call: no escape, no nested object, arrays of scalars only. It is
-- read here with a handful of searches; anything else takes the general reader (members).
local function literal(s, i)
  local _, e = find(s, '^[-+.%deEtrufalsn]+', i)
  if not e then return nil end
  local lit = sub(s, i, e)
  if lit ~= 'true' and lit ~= 'false' and lit ~= 'null' and not find(lit, '^-?%d+%.?%d*[eE]?[-+]?%d*$') then return nil end
  return e
end

local function flatarray(s, i)
  local items = {}
  local close = find(s, ']', i, true)
  if not close or find(s, '[', i + 1, true) and find(s, '[', i + 1, true) < close then return nil end
  i = ws(s, i + 1)
  if i == close then return items end
  while true do
    local e
    if byte(s, i) == 34 then _, e = find(s, '^"[^"%c]*"', i) else e = literal(s, i) end
    if not e then return nil end
    items[#items + 1] = { a = i, b = e }
    i = ws(s, e + 1)
    local c = byte(s, i)
    if c == 93 then return items, i + 1 end
    if c ~= 44 then return nil end
    i = ws(s, i + 1)
  end
end

local function flatcall(s, i)
  if byte(s, i) ~= 123 or find(s, '[\\{]', i + 1) then return nil end
  local m = {}
  i = ws(s, i + 1)
  while true do
    if byte(s, i) ~= 34 then return nil end
    local _, q = find(s, '^"[^"%c]*"', i)
    if not q then return nil end
    local k = sub(s, i + 1, q - 1)
    if m[k] or find(k, '%u') then return nil end
    i = ws(s, q + 1)
    if byte(s, i) ~= 58 then return nil end
    i = ws(s, i + 1)
    local c, e, items = byte(s, i), nil, nil
    if c == 34 then _, e = find(s, '^"[^"%c]*"', i)
    elseif c == 91 then
      local after
      items, after = flatarray(s, i)
      e = after and after - 1
    else e = literal(s, i) end
    if not e then return nil end
    m[k] = { a = i, b = e, k = k, items = items }
    i = ws(s, e + 1)
    c = byte(s, i)
    if c == 125 then return m, i + 1 end
    if c ~= 44 then return nil end
    i = ws(s, i + 1)
  end
end

-- The key of one call (the members of a call object), and its rule; nil when not cacheable.
local function plan(chain, c, s, m)
  if not m or not m.jsonrpc or not m.method or not m.id then return nil end
  local n = 0
  for k, v in pairs(m) do
    if v.k ~= k or not (k == 'jsonrpc' or k == 'method' or k == 'id' or k == 'params') then return nil end
    n = n + 1
  end
  if s:sub(m.jsonrpc.a, m.jsonrpc.b) ~= '"2.0"' then return nil end
  local method = s:sub(m.method.a, m.method.b):match('^"([%w_]+)"$')
  local rule = method and RULES[c.kind][method]
  if not rule then return nil end
  local args = {}
  if m.params then
    local p = m.params
    local items = p.items or elements(s, p.a)
    if items then
      for i, it in ipairs(items) do args[i] = it end
    else
      local named = rule.names and members(s, p.a)
      if not named then return nil end
      local count = 0
      for _ in pairs(named) do count = count + 1 end
      for i, name in ipairs(rule.names) do
        local v = named[name]
        if not v or v.k ~= name then return nil end
        args[i] = v
      end
      if count ~= #rule.names then return nil end
    end
  end
  if #args ~= #rule.args then return nil end
  local parts = { method }
  for i, kind in ipairs(rule.args) do
    local v, num = CANON[kind](s:sub(args[i].a, args[i].b), s, args[i].a)
    if not v then return nil end
    parts[#parts + 1] = v
    if rule.num == i then
      -- By number: only at or below the chain's final block, as last polled.
      if not num or not FINAL[chain] or num > FINAL[chain] then return nil end
    end
  end
  if rule.after and not STORE[chain .. '|' .. rule.after .. '|' .. parts[2]] then return nil end
  return chain .. '|' .. table.concat(parts, '|'), rule
end

-- Whether a node's answer to a call may be stored: a result (never an error or null) that the
-- rule's finality test accepts. Returns the text before and after the answer's id.
local function storable(chain, rule, body)
  local i = skip(body, 1)
  local m, e = members(body, i)
  if not m or skip(body, e) <= #body or m.error or not m.result or not m.id then return nil end
  local r = m.result
  if body:sub(r.a, r.b) == 'null' then return nil end
  if rule.final or rule.status then
    local rm = members(body, r.a)
    local f = rm and rm[(rule.final or rule.status):lower()]
    if not f then return nil end
    local raw = body:sub(f.a, f.b)
    if rule.status and raw ~= '"ACCEPTED_ON_L1"' then return nil end
    if rule.final then
      local _, num = hexq(raw)
      if not num or not FINAL[chain] or num > FINAL[chain] then return nil end
    end
  end
  return body:sub(1, m.id.a - 1), body:sub(m.id.b + 1)
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
  local mk, ia, ib = unid(s, chain)
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
      local key = okm and plan(chain, c, s, m)
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
    local key, rule = plan(chain, c, s, m)
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
  if not p then return reply(applet, 500, '{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal gateway error"}}') end
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
  local c = CHAINS[chain]
  local ok, res = pcall(function()
    return core.httpclient():post{ url = c.url, body = p.body, timeout = 60000, headers = { ['content-type'] = { 'application/json' } } }
  end)
  if not ok or not res or not res.status or res.status == 0 then
    return reply(applet, 502, '{"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"upstream node returned an invalid response"}}')
  end
  local body = res.body or ''
  if res.status == 200 then
    local okp, pre, post = pcall(storable, chain, p.rule, body)
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

local function rpc(c, method, params)
  local res = core.httpclient():post{ url = c.url, timeout = 10000, body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":' .. params .. '}',
    headers = { ['content-type'] = { 'application/json' }, ['user-agent'] = { POLL_AGENT } } }
  if not res or res.status ~= 200 then return nil end
  local b = res.body or ''
  local m = members(b, skip(b, 1))
  return m and m.result and b, m and m.result
end

local function poll(name, c)
  if c.kind == 'evm' then
    local b, r = rpc(c, 'eth_getBlockByNumber', '["finalized",false]')
    local rm = b and members(b, r.a)
    local n
    if rm and rm.number then _, n = hexq(b:sub(rm.number.a, rm.number.b)) end
    if not n and c.depth > 0 then
      -- No finalized tag on this node: a fixed depth below its head.
      local b2, r2 = rpc(c, 'eth_blockNumber', '[]')
      local head
      if b2 then _, head = hexq(b2:sub(r2.a, r2.b)) end
      n = head and head - c.depth
    end
    FINAL[name] = n and n >= 0 and n or nil
  elseif c.kind == 'starknet' then
    local b, r = rpc(c, 'starknet_getBlockWithTxHashes', '["l1_accepted"]')
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
`;
