/**
 * cache.lua, part 1: the store. Entries in a least-recently-used list within the byte budget
 * (BUDGET, counted on the text held plus OVERHEAD per entry), and aliases from a body with its
 * id cut out to the entry it asks for.
 */
export const CACHE_STORE_LUA = String.raw`
local BYTES, COUNT, HEAD, TAIL, STORE, PENDING, SEQ = 0, 0, nil, nil, {}, {}, 0
local FINAL = {}
-- A stored entry costs its text plus this much: its tables, list links and index slots measured
-- 420 bytes with collectgarbage('count') on Lua 5.3, plus the headers of its three strings.
local OVERHEAD = 512
-- Lua starts a collection when its heap has doubled since the last one (pause 200), so garbage
-- could grow to the size of the cache itself; at 120 it stays within a fifth of it.
if _VERSION == 'Lua 5.3' then collectgarbage('setpause', 120) else collectgarbage('incremental', 120) end
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

`;
