-- The response cache's keys and finality: the canonical key of a call (exact arity, canonical
-- arguments, by the rules of gateway/cache.ts), whether a node's answer may be stored, and the
-- alias key of a body (the body with its id cut out).
--
--   plan(chain, rules, final, stored, s, m) -> key, rule, at   the key of the call whose members
--       (json.members) are m in body s; rules: the chain kind's method -> rule; final: the
--       chain's final block number (nil while unknown); stored: the store's entries (a rule's
--       `after`); at: the block number a by-number call names. nil when the call is not cacheable.
--   storable(rule, final, body) -> pre, post   the text before and after the id of a node's
--       answer that may be stored; nil when it may not
--   split(body) -> pre, post   the same for any answer to one call (nil: not one JSON-RPC response)
--   unid(s, chain) -> alias, a, b   the body with its id cut out, and the id's span
--   flatcall(s, i) -> m, e   one flat call read with a few searches (nil: use json.members)
--   hexq(raw) -> digits, number   a JSON string "0x..." as a canonical quantity
local json = require 'rpcstack.json'
local members, elements, ws, skip, literal_end = json.members, json.elements, json.ws, json.skip, json.literal
local byte, find, sub = string.byte, string.find, string.sub

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
CANON.block = function(raw, s, a)
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

-- The common body is one flat call: no escape, no nested object, arrays of scalars only. It is
-- read here with a handful of searches; anything else takes the general reader (members).
local function literal(s, i)
  local e = literal_end(s, i)
  return e and e - 1
end

-- An id the node accepts and echoes: a string or a number. JSON-RPC 2.0 allows null but
-- discourages it, and nodes differ (hardhat refuses it; geth echoes it), so null goes to the node
-- with booleans, objects and arrays (which geth and hardhat answer with -32600).
local function plain_id(s, a)
  local c = byte(s, a)
  return c == 34 or c == 45 or (c ~= nil and c >= 48 and c <= 57)
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

local function plan(chain, rules, final, stored, s, m)
  if not m or not m.jsonrpc or not m.method or not m.id or not plain_id(s, m.id.a) then return nil end
  for k, v in pairs(m) do
    if v.k ~= k or not (k == 'jsonrpc' or k == 'method' or k == 'id' or k == 'params') then return nil end
  end
  if s:sub(m.jsonrpc.a, m.jsonrpc.b) ~= '"2.0"' then return nil end
  local method = s:sub(m.method.a, m.method.b):match('^"([%w_]+)"$')
  local rule = method and rules[method]
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
      if not num or not final or num > final then return nil end
      at = num
    end
  end
  if rule.after and not stored[chain .. '|' .. rule.after .. '|' .. parts[2]] then return nil end
  return chain .. '|' .. table.concat(parts, '|'), rule, at
end

-- The members of a node's answer that is one JSON-RPC response with an id; nil otherwise.
local function response(body)
  local okm, m, e = pcall(members, body, skip(body, 1))
  if not okm or not m or skip(body, e) <= #body or not m.id then return nil end
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
local function storable(rule, final, body)
  local m = response(body)
  if not m or m.error or not m.result then return nil end
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
      if not num or not final or num > final then return nil end
    end
  end
  return body:sub(1, m.id.a - 1), body:sub(m.id.b + 1)
end

-- Nil when the body has a backslash or an id that is not a plain string or a number.
local function unid(s, chain)
  if find(s, '\\', 1, true) then return nil end
  local _, e = find(s, '[{,]%s*"id"%s*:%s*')
  if not e then return nil end
  local a, b = e + 1, nil
  if byte(s, a) == 34 then
    _, b = find(s, '^"[^"%c]*"', a)
  elseif plain_id(s, a) then
    b = literal(s, a)
  end
  if not b then return nil end
  -- The chain (no "|" in a chain path) is part of the alias: the same call on another chain is another entry.
  return chain .. '|' .. sub(s, 1, a - 1) .. '\0' .. sub(s, b + 1), a, b
end

return { plan = plan, storable = storable, split = split, unid = unid, flatcall = flatcall, hexq = hexq, CANON = CANON }
