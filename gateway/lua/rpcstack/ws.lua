-- A WebSocket client's messages as the gateway reads them (RFC 6455 5.2): frame headers,
-- unmasking, and the verdict on a whole message, read as the node will read it (the method
-- policy's reader, rpcstack/policy.lua).
--
--   header(h, p) -> hlen, len, op, fin, key   the header of the frame at h[p] (p: 1 by default),
--       or nothing while its bytes are not all in; key is the 4-byte mask, nil on an unmasked frame
--   unmask(payload, key, i, n) -> the text of the n bytes of payload from payload[i] (by default
--       all of it; payload itself when key is nil)
--   frame(text, key) -> one final text frame carrying text, masked with key when there is one
--   close(code, reason, key) -> a close frame with that status code and reason, masked likewise
--   unit(data, p, max, room) -> stop, frames | nil, need | false
--       the unit at data[p] (1-based): a control frame on its own, or a whole message, its data
--       frames and any control frames between them. stop: the index after it; frames: its data
--       frames as { payload start, length, mask }. nil, need: not all in yet, and the length data
--       must reach (from p) before it can be. false: a protocol error, or a message over max bytes
--       (payload) or over max + room (with its frame headers)
--   check(text, rules, subs, mark) -> verdict, calls, text', opened, made
--       rules  { deny = {...}, allow = {...}, subscribe = { opens = s, closes = s }, filter = p,
--              max_batch = n } (lower case: deny and allow as the policy has them; a call opens a
--              subscription when its name contains `opens` and not `closes`, and creates a filter
--              when it matches the Lua pattern `filter`, if any: gateway/methods.ts)
--       subs   { socket = n, socket_max = n, key = n, key_max = n, filters = n }: subscriptions
--              opened on this socket and on all of the key's sockets, their caps, and the filters
--              the key may still create (nil: no bound; a function: asked once, at the first
--              call that creates one)
--       verdict  nil, "invalid" (not JSON the gateway can read whole) or "batch" (more than
--              max_batch calls): the socket is closed on either. The common message (one object,
--              no backslash, one "method" key) is read without the parser, as the HTTP path reads
--              it with json_query: cut short, it goes on and the node answers a parse error
--       calls  the number of calls (a single call is one), for the rate
--       text'  the message to forward instead ('' for none), or nil to forward it as it is:
--              each call the policy denies, each subscription past a cap and each filter past the
--              key's bound becomes a call of a method no node serves (DENIED, OVER_CAP,
--              OVER_FILTERS), with the call's own id, so the node answers it with a JSON-RPC error
--              (-32601) in its place and the other calls go through. With mark, a denied call goes
--              under the id mark(answer) gives instead: answer is the gateway's own error for it
--              (rpcstack/answers.lua), which replaces the node's (reanswer). A denied notification
--              is dropped (no answer is due): a message left with no call is not forwarded
--       opened the subscriptions this message opens
--       made   the filters it creates
--   reanswer(text, pending, prefix) -> text' | nil
--       a node's message with its answers to marked calls (pending: raw id -> the gateway's
--       answer, n: how many; every marked id starts with prefix) replaced by the gateway's
--       answers, which leave pending; nil when it holds none
local json = require 'rpcstack.json'
local policy = require 'rpcstack.policy'
local answers = require 'rpcstack.answers'
local byte, char, find, pack, unpack = string.byte, string.char, string.find, string.pack, string.unpack
local concat, tunpack = table.concat, table.unpack

local DENIED = 'rpcstack_method_not_served'
local OVER_CAP = 'rpcstack_subscription_limit_reached'
local OVER_FILTERS = 'rpcstack_filter_limit_reached'

local function header(h, p)
  p = p or 1
  local n = #h - p + 1
  if n < 2 then return end
  local b1, b2 = byte(h, p, p + 1)
  local len, hlen = b2 & 127, 2
  if len == 126 then hlen = 4 elseif len == 127 then hlen = 10 end
  local masked = b2 >= 128
  if masked then hlen = hlen + 4 end
  if n < hlen then return end
  if len == 126 then len = unpack('>I2', h, p + 2) elseif len == 127 then len = unpack('>i8', h, p + 2) end
  return hlen, len, b1 & 15, b1 >= 128, masked and h:sub(p + hlen - 4, p + hlen - 1) or nil
end

-- Eight bytes at a time (the mask repeated twice as one 64-bit word), up to WORDS words per
-- string.unpack and string.pack: a message costs a few strings, not one per word.
local WORDS = 128
local FORMATS = setmetatable({}, { __index = function(t, w)
  t[w] = '<' .. string.rep('i8', w)
  return t[w]
end })
local function unmask(payload, key, i, n)
  i = i or 1
  n = n or #payload - i + 1
  if not key then return (i == 1 and n == #payload) and payload or payload:sub(i, i + n - 1) end
  local k4 = unpack('<I4', key)
  local k8 = k4 | (k4 << 32)
  local stop = i + n - n % 8
  local out, p = {}, i
  while p < stop do
    local w = (stop - p) // 8
    if w > WORDS then w = WORDS end
    local format = FORMATS[w]
    local words = { unpack(format, payload, p) }
    for j = 1, w do words[j] = words[j] ~ k8 end
    out[#out + 1] = pack(format, tunpack(words, 1, w))
    p = p + 8 * w
  end
  for b = stop, i + n - 1 do out[#out + 1] = char(byte(payload, b) ~ byte(key, (b - i) % 4 + 1)) end
  return concat(out)
end

local function frame(text, key)
  local n = #text
  local mask = key and 128 or 0
  local head
  if n < 126 then head = char(0x81, mask | n)
  elseif n < 65536 then head = char(0x81, mask | 126) .. pack('>I2', n)
  else head = char(0x81, mask | 127) .. pack('>i8', n) end
  if not key then return head .. text end
  return head .. key .. unmask(text, key)
end

-- A close frame (opcode 8): a status code and a reason of at most 123 bytes (RFC 6455 5.5,
-- 5.5.1), masked with key when there is one (the client's direction).
local function close(code, reason, key)
  local body = pack('>I2', code) .. reason:sub(1, 123)
  local head = char(0x88, (key and 128 or 0) | #body)
  if not key then return head .. body end
  return head .. key .. unmask(body, key)
end

local function unit(data, p, max, room)
  local start, frames, size, held = p, {}, 0, 0
  while true do
    local hlen, len, op, fin, key = header(data, p)
    -- A header is 2 to 14 bytes: wait for one more than there is.
    if not hlen then return nil, #data - start + 2 end
    if len < 0 or (op >= 8 and len > 125) then return false end
    if op < 8 then
      size, held = size + len, held + hlen + len
      if size > max or held > max + room then return false end
    end
    local e = p + hlen + len
    if e - 1 > #data then return nil, e - start end
    if op < 8 then frames[#frames + 1] = { p + hlen, len, key } end
    p = e
    if #frames == 0 or (op < 8 and fin) then return p, frames end
  end
end

-- What each call is: 'denied' (and the denied method, as sent), 'subscribe', 'filter' or nil,
-- from its methods (every "method" key).
local function kind(methods, rules)
  local denied = policy.denied(methods, rules)
  if denied then return 'denied', denied end
  local k
  local sub = rules.subscribe
  for _, m in ipairs(methods) do
    local lm = m:lower()
    if find(lm, sub.opens, 1, true) and not find(lm, sub.closes, 1, true) then
      k = 'subscribe'
    elseif rules.filter and find(lm, rules.filter) then
      k = k or 'filter'
    end
  end
  return k
end

-- The call at text[a] replaced by a call of r.name, under its own id (none: a notification), or
-- for a denied call (r.method) with mark: under the id mark(answer) gives for the gateway's answer.
-- A denied notification is dropped (nil): no answer is due, and nothing need reach the node.
local function replaced(text, a, r, mark)
  local id = answers.id_of(text, a)
  -- A batch item that is no call: the gateway's Invalid Request answers it, in its place (id null).
  if r.invalid then
    if not mark then return nil end
    id = mark(answers.INVALID)
  elseif not id and r.method then return nil end
  if id and r.method and mark then id = mark(answers.refusal(id, r.method)) end
  return '{"jsonrpc":"2.0",' .. (id and ('"id":' .. id .. ',') or '') .. '"method":"' .. r.name .. '","params":[]}'
end

-- The common message, read without the parser: one object with no backslash and one "method" key
-- in any case, whose value is a string (what the HTTP path reads natively with json_query). Nil
-- for anything else, which the policy's reader reads whole.
local METHOD_KEY = '"[mM][eE][tT][hH][oO][dD]"'
local function simple(text)
  local s = json.skip(text, 1)
  if byte(text, s) ~= 123 or find(text, '\\', s, true) then return nil end
  local a = find(text, METHOD_KEY, s)
  if not a or find(text, METHOD_KEY, a + 8) then return nil end
  return text:match('^%s*:%s*"([^"]*)"', a + 8)
end

-- The common message's one call, reused by every call of check (it cannot yield).
local ONE = { {} }

local function check(text, rules, subs, mark)
  local calls, invalid
  local m1 = simple(text)
  if m1 then
    ONE[1][1] = m1
    calls = ONE
  else
    calls, invalid = policy.read(text)
  end
  if not calls then return 'invalid' end
  if #calls > rules.max_batch then return 'batch', #calls end
  local refuse, opened, made, filters = nil, 0, 0, subs.filters
  for i, methods in ipairs(calls) do
    local k, m = kind(methods, rules)
    local r
    if invalid and invalid[i] then
      r = { name = DENIED, invalid = true }
    elseif k == 'denied' then
      r = { name = DENIED, method = m }
    elseif k == 'subscribe' then
      if subs.socket + opened < subs.socket_max and subs.key + opened < subs.key_max then
        opened = opened + 1
      else
        r = { name = OVER_CAP }
      end
    elseif k == 'filter' then
      if type(filters) == 'function' then filters = filters() end
      if not filters or made < filters then
        made = made + 1
      else
        r = { name = OVER_FILTERS }
      end
    end
    if r then
      refuse = refuse or {}
      refuse[i] = r
    end
  end
  if not refuse then return nil, #calls, nil, opened, made, 0 end
  local refused = 0
  for _ in pairs(refuse) do refused = refused + 1 end
  local start = json.skip(text, 1)
  if byte(text, start) ~= 91 then
    return nil, #calls, replaced(text, start, refuse[1], mark) or '', opened, made, refused
  end
  local items = json.elements(text, start)
  local out = {}
  for i, it in ipairs(items) do
    -- A dropped call (nil) leaves no gap.
    if refuse[i] then out[#out + 1] = replaced(text, it.a, refuse[i], mark)
    else out[#out + 1] = text:sub(it.a, it.b) end
  end
  return nil, #calls, #out > 0 and '[' .. concat(out, ',') .. ']' or '', opened, made, refused
end

-- A node's message with the answers to marked calls (ids in `pending`, raw) replaced by the
-- gateway's own; nil when it holds none. Those found leave `pending`; n counts them.
local function reanswer(text, pending, prefix)
  if not find(text, prefix, 1, true) then return nil end
  local s = json.skip(text, 1)
  local function own(a)
    local ok, id = pcall(answers.id_of, text, a)
    local r = ok and id and pending[id]
    if r then pending[id], pending.n = nil, pending.n - 1 end
    return r
  end
  if byte(text, s) == 123 then return own(s) end
  local ok, items = pcall(json.elements, text, s)
  if not ok or not items then return nil end
  local out, any = {}, false
  for i, it in ipairs(items) do
    local r = own(it.a)
    out[i], any = r or text:sub(it.a, it.b), any or r ~= nil
  end
  return any and '[' .. concat(out, ',') .. ']' or nil
end

return {
  reanswer = reanswer,
  header = header, unmask = unmask, frame = frame, close = close, unit = unit, check = check,
  DENIED = DENIED, OVER_CAP = OVER_CAP,
  OVER_FILTERS = OVER_FILTERS,
}
