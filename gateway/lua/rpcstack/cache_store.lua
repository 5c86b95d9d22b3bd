-- The response cache's store: entries in a least-recently-used list within a byte budget
-- (counted on the text held plus OVERHEAD per entry), and aliases from a body with its id cut
-- out to the entry it asks for. Each entry belongs to the project key that read it last, and a
-- key holding more than an equal share of the budget makes room from its own entries: one key
-- reading many distinct answers cannot push every other key's answers out.
--
--   new(budget, max_object, stats) -> store, where stats[chain] counts stored, bytes, evictions
--   store.entries[key]    the entry held under key: { key, pre, post, size, chain, aliases, owner }
--   store.aliases[mk]     the entry an alias names
--   store.put(chain, key, pre, post, owner)  stores an answer read by owner (nil when too large),
--                         evicting least recently used entries (see victim) to stay within the budget
--   store.get(key, owner) the entry, now the most recently used, and owner's
--   store.alias(e, mk)    records mk as another name of e, within the budget
--   store.flush(chain)    drops every entry of a chain
--   store.bytes()         bytes held, counted against the budget
--   store.held(owner)     bytes held by entries owner read last

-- A stored entry costs its text plus this much: its tables, list links and index slots measured
-- 420 bytes with collectgarbage('count') on Lua 5.3, plus the headers of its three strings.
local OVERHEAD = 512

-- Aliases: a body with its id cut out -> the entry it asks for. Without a backslash no string can
-- hold a quote, so the text outside the id fixes the call, and a body equal to one already read
-- in full (but for its id) needs no second reading. Each entry keeps a few, counted in its size.
local ALIASES_PER_ENTRY = 4

local function new(budget, max_object, stats)
  local BYTES, HEAD, TAIL, STORE, ALIAS = 0, nil, nil, {}, {}
  -- Per owner: bytes held and its own least-recently-used list (oprev/onext); ACTIVE owners hold any.
  local OWNERS, ACTIVE = {}, 0

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

  local function disown(e)
    local o = OWNERS[e.owner]
    if e.oprev then e.oprev.onext = e.onext else o.head = e.onext end
    if e.onext then e.onext.oprev = e.oprev else o.tail = e.oprev end
    e.oprev, e.onext = nil, nil
    o.bytes = o.bytes - e.size
    if not o.head then OWNERS[e.owner], ACTIVE = nil, ACTIVE - 1 end
  end

  local function own(e, owner)
    local o = OWNERS[owner]
    if not o then
      o = { bytes = 0 }
      OWNERS[owner], ACTIVE = o, ACTIVE + 1
    end
    e.owner, e.oprev, e.onext = owner, nil, o.head
    if o.head then o.head.oprev = e end
    o.head = e
    if not o.tail then o.tail = e end
    o.bytes = o.bytes + e.size
  end

  local function drop(e, evicted)
    unlink(e)
    disown(e)
    STORE[e.key] = nil
    for _, a in ipairs(e.aliases) do ALIAS[a] = nil end
    BYTES = BYTES - e.size
    local st = stats[e.chain]
    st.stored, st.bytes = st.stored - 1, st.bytes - e.size
    if evicted then st.evictions = st.evictions + 1 end
  end

  -- What gives way for `size` more bytes of owner's: its own least recently used entry while it
  -- would hold more than budget / (keys holding entries), else the least recently used of all;
  -- never `keep`.
  local function victim(owner, size, keep)
    local o = OWNERS[owner]
    if o and o.tail ~= keep and (o.bytes + size) * ACTIVE > budget then return o.tail end
    if TAIL ~= keep then return TAIL end
    return nil
  end

  local function put(chain, key, pre, post, owner)
    owner = owner or ''
    local size = #key + #pre + #post + OVERHEAD
    if size > max_object or size > budget then return nil end
    local old = STORE[key]
    if old then drop(old, false) end
    while BYTES + size > budget and TAIL do drop(victim(owner, size), true) end
    local e = { key = key, pre = pre, post = post, size = size, chain = chain, aliases = {} }
    STORE[key] = e
    push(e)
    own(e, owner)
    BYTES = BYTES + size
    local st = stats[chain]
    st.stored, st.bytes = st.stored + 1, st.bytes + size
    return e
  end

  local function alias(e, mk)
    if not e or not mk or ALIAS[mk] or #e.aliases >= ALIASES_PER_ENTRY or STORE[e.key] ~= e then return end
    local add = #mk + OVERHEAD
    while BYTES + add > budget do
      local v = victim(e.owner, add, e)
      if not v then return end
      drop(v, true)
    end
    e.aliases[#e.aliases + 1] = mk
    ALIAS[mk] = e
    e.size, BYTES = e.size + add, BYTES + add
    OWNERS[e.owner].bytes = OWNERS[e.owner].bytes + add
    stats[e.chain].bytes = stats[e.chain].bytes + add
  end

  local function get(key, owner)
    local e = STORE[key]
    if not e then return nil end
    if e ~= HEAD then unlink(e); push(e) end
    disown(e)
    own(e, owner or e.owner)
    return e
  end

  local function flush(chain)
    local e = HEAD
    while e do
      local nxt = e.next
      if e.chain == chain then drop(e, false) end
      e = nxt
    end
  end

  return {
    entries = STORE, aliases = ALIAS, put = put, get = get, alias = alias, flush = flush,
    bytes = function() return BYTES end,
    held = function(owner) return OWNERS[owner] and OWNERS[owner].bytes or 0 end,
  }
end

return { new = new, OVERHEAD = OVERHEAD, ALIASES_PER_ENTRY = ALIASES_PER_ENTRY }
