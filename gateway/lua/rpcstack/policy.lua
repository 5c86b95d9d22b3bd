-- The method policy's decision on a JSON-RPC body, read whole as the node will read it. Strings
-- are decoded (\u escapes included) and object keys compared ignoring case, and every "method"
-- key of a call is checked: Go's decoder matches keys case-insensitively and keeps the last
-- duplicate, JavaScript keeps the last, others the first.
--
--   decide(body, lists, max_batch) -> verdict, calls, method, send
--     verdict  nil (allowed) | "denied" (a denied call, or a batch item that is no call) | "batch"
--              (more than max_batch calls) | "parse" (not JSON: JSON-RPC's parse error) |
--              "invalid" (JSON, but no call or batch it can check: a bare value, or nested past
--              64 levels); calls: the number of calls (a single call is one), when
--              the body was read; method: the first denied method, as sent (decoded); send:
--              with lists.reads, whether an allowed body holds a call that is not known to be a
--              read (then it is never sent to a second node)
--     lists    { deny = {...}, allow = {...}, reads = { [name] = true } }, lower case; a deny or
--              allow entry ending in "_" is a family; reads (chains with several nodes have it)
--              is the chain kind's set of read methods (gateway/methods.ts)
--   denied(methods, lists) -> the first of a call's methods the lists deny, as sent, or nil
--   read(body) -> calls, invalid   each call's methods (every string under a "method" key, in any
--     case), a single call being one; nil when the body is not JSON it can read whole. invalid:
--     the positions of a batch's items that are no object (a nested batch, a number, a string):
--     invalid requests (JSON-RPC 2.0, 6) that never reach a node; nil when there are none.
--     When calls is nil, a third value says why: "parse" (not JSON) or "invalid"
local json = require 'rpcstack.json'
local skip, str = json.skip, json.str

-- Parses one value at s[i]; objects come back as { methods = {...} } (only what the policy needs).
local value
value = function(s, i, depth)
  if depth > 64 then error('too deep') end
  i = skip(s, i)
  local c = s:sub(i, i)
  if c == '{' then
    local methods = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == '}' then return { methods = methods }, i + 1 end
    while true do
      if s:sub(i, i) ~= '"' then error('expected a key') end
      local k
      k, i = str(s, i)
      i = skip(s, i)
      if s:sub(i, i) ~= ':' then error('expected :') end
      local v
      v, i = value(s, i + 1, depth + 1)
      if k:lower() == 'method' then methods[#methods + 1] = v end
      i = skip(s, i)
      c = s:sub(i, i)
      if c == '}' then return { methods = methods }, i + 1 end
      if c ~= ',' then error('expected , or }') end
      i = skip(s, i + 1)
    end
  elseif c == '[' then
    local items = {}
    i = skip(s, i + 1)
    if s:sub(i, i) == ']' then return { items = items }, i + 1 end
    while true do
      local v
      v, i = value(s, i, depth + 1)
      items[#items + 1] = v
      i = skip(s, i)
      c = s:sub(i, i)
      if c == ']' then return { items = items }, i + 1 end
      if c ~= ',' then error('expected , or ]') end
      i = i + 1
    end
  elseif c == '"' then
    return str(s, i)
  else
    local lit = s:match('^-?%d+%.?%d*[eE]?[-+]?%d*', i)
      or s:match('^true', i) or s:match('^false', i) or s:match('^null', i)
    if not lit or #lit == 0 then error('unexpected character') end
    return false, i + #lit
  end
end

-- Each list as sets, built once per list (the lists are the generated data's, never changed):
-- a method is then looked up, not compared with every entry. `lengths` holds each family's
-- length once, so a long method costs at most one cut per family length.
local sets = setmetatable({}, { __mode = 'k' })
local function set_of(list)
  local s = sets[list]
  if s then return s end
  s = { exact = {}, family = {}, lengths = {} }
  for _, e in ipairs(list) do
    s.exact[e] = true
    if e:sub(-1) == '_' and not s.family[e] then
      s.family[e] = true
      local known = false
      for _, n in ipairs(s.lengths) do known = known or n == #e end
      if not known then s.lengths[#s.lengths + 1] = #e end
    end
  end
  sets[list] = s
  return s
end

local function listed(m, list)
  local s = set_of(list)
  if s.exact[m] then return true end
  for _, n in ipairs(s.lengths) do
    if m:byte(n) == 95 and s.family[m:sub(1, n)] then return true end
  end
  return false
end

local function read(body)
  local ok, parsed, rest = pcall(value, body, 1, 0)
  if not ok then return nil, nil, tostring(parsed):find('too deep', 1, true) and 'invalid' or 'parse' end
  if skip(body, rest) <= #body then return nil, nil, 'parse' end
  if type(parsed) ~= 'table' then return nil, nil, 'invalid' end
  local calls, invalid = {}, nil
  for i, call in ipairs(parsed.items or { parsed }) do
    local methods = {}
    if type(call) ~= 'table' or not call.methods then
      invalid = invalid or {}
      invalid[i] = true
    end
    for _, m in ipairs(type(call) == 'table' and call.methods or {}) do
      if type(m) == 'string' then methods[#methods + 1] = m end
    end
    calls[i] = methods
  end
  return calls, invalid
end

-- The first of a call's methods the lists deny, as sent; nil when none is.
local function denied(methods, lists)
  for _, m in ipairs(methods) do
    local lm = m:lower()
    if listed(lm, lists.deny) and not listed(lm, lists.allow) then return m end
  end
  return nil
end

-- The verdict on a body, its number of calls, the first denied method as sent, whether a call may
-- send (with `lists.reads`), and for a batch holding refused calls how many of them are relayed.
local function decide(body, lists, max_batch)
  local calls, invalid, why = read(body)
  if not calls then return why end
  if #calls > max_batch then return 'batch' end
  local send, first, relayed = false, nil, 0
  for i, methods in ipairs(calls) do
    -- A call whose method is not a string (or missing) is no read the policy can vouch for.
    if #methods == 0 then send = true end
    local refused = invalid and invalid[i]
    for _, m in ipairs(methods) do
      if denied({ m }, lists) then
        first, refused = first or m, true
      elseif lists.reads and not lists.reads[m:lower()] then
        send = true
      end
    end
    if not refused then relayed = relayed + 1 end
  end
  -- Items that are no call are answered in place by the gateway, as denied calls are (rpcstack/answers.lua).
  if first or invalid then return 'denied', #calls, first, nil, relayed end
  if lists.reads then return nil, #calls, nil, send end
  return nil, #calls
end

return { decide = decide, read = read, listed = listed, denied = denied }
