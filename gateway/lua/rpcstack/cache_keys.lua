-- The response cache's keys and finality: the canonical key of a call (exact arity, canonical
-- arguments, by the rules of gateway/cache.ts), whether a node's answer may be stored, and the
-- alias key of a body (the body with its id cut out).
--
-- A chain as these functions see it: { name, rules (its kind's method -> rule), ids (the ids its
-- node answers as calls: one of IDS), final (its final block number, nil while unknown), stored
-- (the store's entries, for a rule's `after`) }.
--
--   read(c, s) -> { batch, calls = { { key, rule, at, ida, idb } } }   the calls body s asks the
--       cache for, each with its key, the block number it names (at, by-number calls) and its
--       id's span; nil when the cache cannot answer it (not read whole, text after it, or a
--       call that is not cacheable)
--   plan(c, s, m) -> key, rule, at   the key of the call whose members (json.members) are m in s;
--       nil when the call is not cacheable
--   storable(c, rule, body) -> pre, post   the text before and after the id of a node's answer
--       that may be stored; nil when it may not
--   split(body) -> pre, post   the same for any answer to one call (nil: not one JSON-RPC response)
--   unid(c, s) -> alias, a, b   the body with its id cut out, and the id's span
--   single(s, i) -> m             the members of the one call at s[i]; nil unless it is the whole body
--   envelope(c, s, m) -> method     the method of a JSON-RPC 2.0 call with only its four members
--       and an id c's node answers; nil otherwise
--   hexq(raw) -> digits, number   a JSON string "0x..." as a canonical quantity
local json = require 'rpcstack.json'
local members, elements, ws, skip, scalar = json.members, json.elements, json.ws, json.skip, json.scalar
local byte, find, sub = string.byte, string.find, string.sub

-- The ids a node answers as calls (a fuzz finding: others were answered from the cache where the
-- node answers an error or nothing). geth (rpc/json.go hasValidID): any id but an object or an
-- array. Juno (jsonrpc/server.go isSane) takes a string or a number without "." and null for a
-- notification, Pathfinder integers and strings: on Starknet, strings and integers only.
local IDS = {
  scalar = function(id) local c = byte(id, 1) return c ~= 123 and c ~= 91 end,
  stringOrInteger = function(id) return byte(id, 1) == 34 or find(id, '^-?%d+$') ~= nil end,
  -- hardhat refuses null and booleans (-32600) where geth echoes them: on an EVM chain, whose
  -- node may be either, strings and numbers only.
  stringOrNumber = function(id) local c = byte(id, 1) return c == 34 or c == 45 or (c >= 48 and c <= 57) end,
}

-- Canonical forms of the arguments a rule names; nil: not cacheable (the node decides).
local function hexq(raw)
  local h = raw:match('^"0x(%x+)"$')
  if not h or (#h > 1 and h:sub(1, 1) == '0') or #h > 13 then return nil end
  return h:lower(), tonumber(h, 16)
end
local CANON = {}
-- geth rejects leading zeros in quantities (hexutil: ErrLeadingZero): such spellings go to the node.
CANON.qty = function(raw) local h, n = hexq(raw); return h and ('0x' .. h), n end
CANON.bool = function(raw) return (raw == 'true' or raw == 'false') and raw or nil end
CANON.hash = function(raw) local h = raw:match('^"0x(%x+)"$'); return h and #h == 64 and ('0x' .. h:lower()) or nil end
-- Felts as the Starknet spec writes them: 0x and up to 63 digits, no leading zero.
CANON.felt = function(raw)
  local h = raw:match('^"0x(%x+)"$')
  if not h or #h > 64 or (#h > 1 and h:sub(1, 1) == '0') then return nil end
  return '0x' .. h:lower()
end
CANON.block = function(_, s, a)
  local m = members(s, a)
  if not m then return nil end
  local n, key = 0, nil
  for _, v in pairs(m) do
    n = n + 1
    local r = s:sub(v.a, v.b)
    if v.k == 'block_number' and (r == '0' or r:match('^[1-9]%d*$')) and #r < 16 then key = 'n' .. r
    elseif v.k == 'block_hash' then local h = CANON.felt(r); key = h and ('h' .. h) end
  end
  if n ~= 1 or not key then return nil end
  return key, key:sub(1, 1) == 'n' and tonumber(key:sub(2)) or nil
end

-- eth_getLogs' filter: fromBlock and toBlock as quantities, and address (one or a list) and topics
-- (each position null, a topic or a list of them) if present, every name spelled as the execution
-- API spells it (geth reads names in any case; other nodes may not). Its canonical text, and
-- toBlock as the number finality is judged by: a range that ends at or below the final block
-- never changes. A blockHash, a tag, another member: nil (the node decides).
local FILTER = { fromBlock = true, toBlock = true, address = true, topics = true }
local function hex20(raw) local h = raw:match('^"0x(%x+)"$'); return h and #h == 40 and ('0x' .. h:lower()) or nil end
local function topic(raw) return raw == 'null' and 'n' or CANON.hash(raw) end
local function list(s, v, one)
  if byte(s, v.a) ~= 91 then return one(s:sub(v.a, v.b)) end
  local out = {}
  for i, it in ipairs(elements(s, v.a)) do
    out[i] = one(s:sub(it.a, it.b))
    if not out[i] then return nil end
  end
  return '[' .. table.concat(out, ';') .. ']'
end
CANON.filter = function(_, s, a)
  local m = byte(s, a) == 123 and members(s, a)
  if not m or not m.fromblock or not m.toblock then return nil end
  for k, v in pairs(m) do
    if not FILTER[v.k] or v.k:lower() ~= k then return nil end
  end
  local from = hexq(s:sub(m.fromblock.a, m.fromblock.b))
  local to, last = hexq(s:sub(m.toblock.a, m.toblock.b))
  if not from or not to then return nil end
  local address = '-'
  if m.address then
    address = list(s, m.address, hex20)
    if not address then return nil end
  end
  local topics = '-'
  if m.topics then
    if byte(s, m.topics.a) ~= 91 then return nil end
    local out = {}
    for i, it in ipairs(elements(s, m.topics.a)) do
      out[i] = list(s, it, topic)
      if not out[i] then return nil end
    end
    topics = '[' .. table.concat(out, ',') .. ']'
  end
  return '0x' .. from .. '-0x' .. to .. '@' .. address .. '#' .. topics, last
end

-- The common body is one flat call: no escape, no nested object, arrays of scalars only. It is
-- read here with a handful of searches; anything else takes the general reader (members).
local function literal(s, i)
  local _, e = find(s, '^[-+.%deEtrufalsn]+', i)
  if not e then return nil end
  if not scalar(sub(s, i, e)) then return nil end
  return e
end

local function flatarray(s, i)
  local _
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
    local c = byte(s, i)
    local e, items
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

-- The method of a call whose members are m: a JSON-RPC 2.0 call with an id the chain's node
-- answers, no member but the four (each spelled in lower case), a method name of word characters.
local function envelope(c, s, m)
  if not m or not m.jsonrpc or not m.method or not m.id then return nil end
  for k, v in pairs(m) do
    if v.k ~= k or not (k == 'jsonrpc' or k == 'method' or k == 'id' or k == 'params') then return nil end
  end
  if s:sub(m.jsonrpc.a, m.jsonrpc.b) ~= '"2.0"' or not c.ids(s:sub(m.id.a, m.id.b)) then return nil end
  return s:sub(m.method.a, m.method.b):match('^"([%w_]+)"$')
end

local function plan(c, s, m)
  local method = envelope(c, s, m)
  local rule = method and c.rules[method]
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
  local parts, at = { method }, nil
  for i, kind in ipairs(rule.args) do
    local v, num = CANON[kind](s:sub(args[i].a, args[i].b), s, args[i].a)
    if not v then return nil end
    parts[#parts + 1] = v
    if rule.num == i then
      -- By number: only at or below the chain's final block, as last polled.
      if not num or not c.final or num > c.final then return nil end
      at = num
    end
  end
  if rule.after and not c.stored[c.name .. '|' .. rule.after .. '|' .. parts[2]] then return nil end
  return c.name .. '|' .. table.concat(parts, '|'), rule, at
end

-- The members of a node's answer that is one JSON-RPC response with an id; nil otherwise.
-- geth and hardhat write {"jsonrpc":"2.0","id":<id>,"result":<value>}: that shape is read with
-- two searches, without walking the whole value (~20 ms a MiB in Lua 5.3); any other takes the
-- general reader.
local function response(body)
  local _, e, id = find(body, '^{"jsonrpc":"2.0","id":(%-?[%d.eE+%-]+),"result":')
  if not e then _, e, id = find(body, '^{"jsonrpc":"2.0","id":("[^"\\%c]*"),"result":') end
  if e then
    local close = #body
    while close > e and find(' \t\r\n', sub(body, close, close), 1, true) do close = close - 1 end
    if byte(body, close) == 125 and close > e + 1 then
      return { id = { a = 23, b = 22 + #id }, result = { a = e + 1, b = close - 1 } }
    end
  end
  local okm, m, after = pcall(members, body, skip(body, 1))
  if not okm or not m or skip(body, after) <= #body or not m.id then return nil end
  return m
end

-- The text before and after the id of a node's answer: any answer to one call can be given to
-- another caller of the same call with that caller's id between them.
local function split(body)
  local m = response(body)
  if not m then return nil end
  return body:sub(1, m.id.a - 1), body:sub(m.id.b + 1)
end

-- A result (never an error or null) that the rule's finality test accepts.
local function storable(c, rule, body)
  local m = response(body)
  if not m or m.error or not m.result then return nil end
  local r = m.result
  if r.b - r.a == 3 and body:sub(r.a, r.b) == 'null' then return nil end
  if rule.final or rule.status then
    local rm = members(body, r.a)
    local f = rm and rm[(rule.final or rule.status):lower()]
    if not f then return nil end
    local raw = body:sub(f.a, f.b)
    if rule.status and raw ~= '"ACCEPTED_ON_L1"' then return nil end
    if rule.final then
      local _, num = hexq(raw)
      if not num or not c.final or num > c.final then return nil end
    end
  end
  return body:sub(1, m.id.a - 1), body:sub(m.id.b + 1)
end

-- Nil when the body has a backslash or an id that is not a plain number, string or null, or one
-- the chain's node does not answer as a call.
local function unid(c, s)
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
  if not b or not c.ids(sub(s, a, b)) then return nil end
  -- The chain (no "|" in a chain path) is part of the alias: the same call on another chain is another entry.
  return c.name .. '|' .. sub(s, 1, a - 1) .. '\0' .. sub(s, b + 1), a, b
end

-- The members of the one call at s[first] and the index after it; nil when it is not one object.
local function single(s, first)
  local m, e = flatcall(s, first)
  if not m then
    local okm
    okm, m, e = pcall(members, s, first)
    if not okm then return nil end
  end
  if not m or skip(s, e) <= #s then return nil end
  return m
end

local function read(c, s)
  local first = skip(s, 1)
  if byte(s, first) == 91 then
    local ok, items, e = pcall(elements, s, first)
    if not ok or not items or #items == 0 or skip(s, e) <= #s then return nil end
    local calls = {}
    for i, it in ipairs(items) do
      local okm, m = pcall(members, s, it.a)
      if not okm then return nil end
      local key, rule, at = plan(c, s, m)
      if not key then return nil end
      calls[i] = { key = key, rule = rule, at = at, ida = m.id.a, idb = m.id.b }
    end
    return { batch = true, calls = calls }
  end
  local m = single(s, first)
  local key, rule, at = plan(c, s, m)
  if not key then return nil end
  return { batch = false, calls = { { key = key, rule = rule, at = at, ida = m.id.a, idb = m.id.b } } }
end

return {
  read = read, plan = plan, single = single, envelope = envelope,
  storable = storable, split = split, unid = unid, hexq = hexq, CANON = CANON, IDS = IDS,
}
