-- The gateway's own JSON-RPC 2.0 answers to calls its method policy refuses, and how a batch that
-- holds refused calls is split and joined (gateway/lua/refusals.lua serves them; docs/gateway.md).
--
--   id_of(text, i) -> the raw id of the call object at text[i] as Go's decoder takes it (the last
--       key that is "id" in any case), nil when it has none (a notification) or is no object
--   refusal(id, method) -> the error answer (-32601) to a refused call: id as sent (raw JSON text;
--       null when missing or not a string, number or null), the method as sent, JSON-escaped and
--       cut to MAX_METHOD characters
--   INVALID: the answer to a batch item that is no call object (JSON-RPC 2.0, 6: -32600, id null)
--   plan(body, lists) -> { calls = {...}, sub = text | nil } | nil
--       a batch read as the node will (nil: not a JSON array). calls: each item in order as
--       { id = raw | nil, answer = refusal text | nil, always = true for an item that is no call,
--       whose answer is due though it has no id }; sub: the allowed items as a smaller batch, in
--       their order and as sent, nil when every call is refused
--   join(p, status, body, failed) -> status, text
--       the answer to the whole batch: each refused call's error in its place, the node's answers
--       (status, body: its reply to p.sub, or status 0 when there was none) matched to the allowed
--       calls by id, any the ids do not match after them. When the node gave no JSON answer, its
--       status is relayed (0 becomes 502) and each allowed call with an id gets failed(status),
--       { code, message }, as its error. No answer at all (only notifications) is an empty body.
local json = require 'rpcstack.json'
local policy = require 'rpcstack.policy'
local byte, concat = string.byte, table.concat

local MAX_METHOD = 100
local NOT_SERVED = -32601

local function id_of(text, i)
  if byte(text, i) ~= 123 then return nil end
  local id
  i = json.skip(text, i + 1)
  while byte(text, i) == 34 do
    local k
    k, i = json.str(text, i)
    i = json.skip(text, json.skip(text, i) + 1)
    local e = json.skipv(text, i, 1)
    if k:lower() == 'id' then id = text:sub(i, e - 1) end
    i = json.skip(text, e)
    if byte(text, i) ~= 44 then break end
    i = json.skip(text, i + 1)
  end
  return id
end

-- An id the answer may carry as sent: a string, a number or null (JSON-RPC 2.0, 4).
local function valid_id(id)
  local c = id and byte(id, 1)
  return c == 34 or c == 45 or (c and c >= 48 and c <= 57) or id == 'null'
end

local ESCAPES = {
  ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n', ['\r'] = '\\r', ['\t'] = '\\t',
}

-- s as a JSON string's inside, at most max characters; bytes that are not UTF-8 become U+FFFD.
local function escaped(s, max)
  s = s:sub(1, 4 * max + 4)
  local parts, i = {}, 1
  while true do
    local ok, bad = utf8.len(s, i)
    if ok then break end
    parts[#parts + 1] = s:sub(i, bad - 1) .. '\239\191\189'
    i = bad + 1
  end
  parts[#parts + 1] = s:sub(i)
  s = concat(parts)
  if utf8.len(s) > max then s = s:sub(1, utf8.offset(s, max + 1) - 1) .. '...' end
  return (s:gsub('[%c"\\]', function(c) return ESCAPES[c] or string.format('\\u%04x', byte(c)) end))
end

local function answer(id, code, message)
  return '{"jsonrpc":"2.0","id":' .. (valid_id(id) and id or 'null') .. ',"error":{"code":' .. code
    .. ',"message":"' .. message .. '"}}'
end

local function refusal(id, method)
  return answer(id, NOT_SERVED, 'method ' .. escaped(method, MAX_METHOD) .. ' is not served by this gateway')
end

local INVALID = answer(nil, -32600, 'Invalid Request')

local function plan(body, lists)
  local start = json.skip(body, 1)
  if byte(body, start) ~= 91 then return nil end
  local ok, items = pcall(json.elements, body, start)
  local calls, invalid = policy.read(body)
  if not ok or not items or not calls then return nil end
  local out, sub = {}, {}
  for i, it in ipairs(items) do
    if invalid and invalid[i] then
      out[i] = { answer = INVALID, always = true }
    else
      local id = id_of(body, it.a)
      local m = policy.denied(calls[i] or {}, lists)
      out[i] = { id = id, answer = m and refusal(id, m) }
      if not m then sub[#sub + 1] = body:sub(it.a, it.b) end
    end
  end
  return { calls = out, sub = #sub > 0 and '[' .. concat(sub, ',') .. ']' or nil }
end

-- The node's answers as raw texts: an array's items, or one object; nil when body is not JSON.
local function answers(body)
  local s = json.skip(body, 1)
  if s > #body then return {} end
  local ok, items, e = pcall(json.elements, body, s)
  if ok and items then
    if json.skip(body, e) <= #body then return nil end
    local out = {}
    for i, it in ipairs(items) do out[i] = body:sub(it.a, it.b) end
    return out
  end
  local okv, ev = pcall(json.skipv, body, s, 0)
  if okv and byte(body, s) == 123 and json.skip(body, ev) > #body then return { body:sub(s, ev - 1) } end
  return nil
end

local function join(p, status, body, failed)
  local got = status == 200 and answers(body or '') or nil
  local out = {}
  if got then
    local by = {}
    for i, a in ipairs(got) do
      local id = id_of(a, 1) or 'null'
      by[id] = by[id] or {}
      table.insert(by[id], i)
    end
    local used = {}
    for _, c in ipairs(p.calls) do
      if c.answer then
        if c.id or c.always then out[#out + 1] = c.answer end
      elseif c.id and by[c.id] and #by[c.id] > 0 then
        local i = table.remove(by[c.id], 1)
        used[i] = true
        out[#out + 1] = got[i]
      end
    end
    for i, a in ipairs(got) do if not used[i] then out[#out + 1] = a end end
  else
    status = (status == 200 or not status or status == 0) and 502 or status
    local code, message = failed(status)
    for _, c in ipairs(p.calls) do
      if c.always then out[#out + 1] = c.answer
      elseif c.id then out[#out + 1] = c.answer or answer(c.id, code, escaped(message, 200)) end
    end
  end
  status = got and 200 or status
  return status, #out > 0 and '[' .. concat(out, ',') .. ']' or ''
end

return { id_of = id_of, refusal = refusal, plan = plan, join = join, MAX_METHOD = MAX_METHOD, INVALID = INVALID }
