-- The response cache's store: entries in a least-recently-used list within a byte budget
-- (counted on the text held plus OVERHEAD per entry), and aliases from a body with its id cut
-- out to the entry it asks for.
--
--   new(budget, max_object, stats) -> store, where stats[chain] counts stored, bytes, evictions
--   store.entries[key]    the entry held under key: { key, pre, post, size, chain, aliases }
--   store.aliases[mk]     the entry an alias names
--   store.put(chain, key, pre, post)  stores an answer (nil when too large), evicting the least
--                         recently used entries to stay within the budget
--   store.get(key)        the entry, now the most recently used
--   store.alias(e, mk)    records mk as another name of e, within the budget
--   store.bytes()         bytes held, counted against the budget

-- A stored entry costs its text plus this much: its tables, list links and index slots measured
-- 420 bytes with collectgarbage('count') on Lua 5.3, plus the headers of its three strings.
local OVERHEAD = 512

-- Aliases: a body with its id cut out -> the entry it asks for. Without a backslash no string can
-- hold a quote, so the text outside the id fixes the call, and a body equal to one already read
-- in full (but for its id) needs no second reading. Each entry keeps a few, counted in its size.
local ALIASES_PER_ENTRY = 4

local function new(budget, max_object, stats)
  local BYTES, HEAD, TAIL, STORE, ALIAS = 0, nil, nil, {}, {}

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

  local function drop(e, evicted)
    unlink(e)
    STORE[e.key] = nil
    for _, a in ipairs(e.aliases) do ALIAS[a] = nil end
    BYTES = BYTES - e.size
    local st = stats[e.chain]
    st.stored, st.bytes = st.stored - 1, st.bytes - e.size
    if evicted then st.evictions = st.evictions + 1 end
  end

  local function put(chain, key, pre, post)
    local size = #key + #pre + #post + OVERHEAD
    if size > max_object or size > budget then return nil end
    local old = STORE[key]
    if old then drop(old, false) end
    while BYTES + size > budget and TAIL do drop(TAIL, true) end
    local e = { key = key, pre = pre, post = post, size = size, chain = chain, aliases = {} }
    STORE[key] = e
    push(e)
    BYTES = BYTES + size
    local st = stats[chain]
    st.stored, st.bytes = st.stored + 1, st.bytes + size
    return e
  end

  local function alias(e, mk)
    if not e or not mk or ALIAS[mk] or #e.aliases >= ALIASES_PER_ENTRY or STORE[e.key] ~= e then return end
    local add = #mk + OVERHEAD
    while BYTES + add > budget and TAIL and TAIL ~= e do drop(TAIL, true) end
    if BYTES + add > budget then return end
    e.aliases[#e.aliases + 1] = mk
    ALIAS[mk] = e
    e.size, BYTES = e.size + add, BYTES + add
    stats[e.chain].bytes = stats[e.chain].bytes + add
  end

  local function get(key)
    local e = STORE[key]
    if e and e ~= HEAD then unlink(e); push(e) end
    return e
  end

  return { entries = STORE, aliases = ALIAS, put = put, get = get, alias = alias, bytes = function() return BYTES end }
end

return { new = new, OVERHEAD = OVERHEAD, ALIASES_PER_ENTRY = ALIASES_PER_ENTRY }
