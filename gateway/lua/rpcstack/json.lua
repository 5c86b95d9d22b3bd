-- JSON reading in HAProxy's Lua, without lua-cjson (Debian's re-encodes `[]` as `{}`, and the
-- official image may not ship it): string decoding shared by the method policy and the response
-- cache, and span scanning for the cache, which must keep the node's bytes exactly as they came
-- and so never decodes a value it does not need.
--
--   skip(s, i)      the next non-blank index (#s + 1 at the end)
--   ws(s, i)        the same, with no search when s[i] is not blank (the cache's hot path)
--   str(s, i)       the decoded string at s[i] and the index after it
--   skipv(s, i, d)  the index after the value at s[i] (no decoding, escapes checked); errors
--                   past depth 64
--   scalar(lit)     whether lit is true, false, null or a number as JSON writes one
--   members(s, i)   an object's members as name -> { a, b, k } (raw span of the value, name as
--                   sent), names lower-cased; nil when a name repeats in any case (servers
--                   disagree on which counts); nil when s[i] is not '{'
--   elements(s, i)  an array's items as a list of { a, b }; nil when s[i] is not '['
-- The readers raise an error on text that is not JSON; callers pcall them.
local byte, find, sub = string.byte, string.find, string.sub

local ESC = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }

local function skip(s, i)
  return s:find('[^ \t\r\n]', i) or #s + 1
end

local function str(s, i)
  -- Most strings hold no escape: one search, no table.
  local q = s:find('["\\%c]', i + 1)
  if q and s:byte(q) == 34 then return s:sub(i + 1, q - 1), q + 1 end
  local out, j = {}, i + 1
  while true do
    local a = s:find('["\\%c]', j)
    if not a then error('unterminated string') end
    out[#out + 1] = s:sub(j, a - 1)
    local c = s:sub(a, a)
    if c == '"' then return table.concat(out), a + 1 end
    if c ~= '\\' then error('control character in string') end
    local e = s:sub(a + 1, a + 1)
    if e == 'u' then
      local hex = s:match('^%x%x%x%x', a + 2)
      if not hex then error('bad \\u escape') end
      local cp, nxt = tonumber(hex, 16), a + 6
      if cp >= 0xD800 and cp <= 0xDBFF then
        local lo = s:match('^\\u(%x%x%x%x)', nxt)
        local l = lo and tonumber(lo, 16)
        if l and l >= 0xDC00 and l <= 0xDFFF then cp, nxt = 0x10000 + (cp - 0xD800) * 0x400 + (l - 0xDC00), nxt + 6 end
      end
      if cp >= 0xD800 and cp <= 0xDFFF then cp = 0xFFFD end
      out[#out + 1] = utf8.char(cp)
      j = nxt
    elseif ESC[e] then
      out[#out + 1] = ESC[e]
      j = a + 2
    else
      error('bad escape')
    end
  end
end

-- Bytes: " 34, [ 91, ] 93, { 123, } 125, , 44, : 58, \ 92.
local function ws(s, i)
  local c = byte(s, i)
  if c == 32 or c == 9 or c == 10 or c == 13 then return find(s, '[^ \t\r\n]', i) or #s + 1 end
  return i
end

-- JSON's numbers exactly, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?: a laxer reading (01, 1.,
-- 1e) would take bodies the nodes refuse as parse errors for calls (a fuzz finding).
local function scalar(lit)
  if lit == 'true' or lit == 'false' or lit == 'null' then return true end
  local _, e = find(lit, '^-?0')
  if not e then _, e = find(lit, '^-?[1-9]%d*') end
  if not e then return false end
  local _, f = find(lit, '^%.%d+', e + 1)
  e = f or e
  local _, g = find(lit, '^[eE][-+]?%d+', e + 1)
  return (g or e) == #lit
end

-- After a backslash in a string: one of these, or u and four hex digits (others make the body a
-- parse error at the node).
local ESCAPED = {}
for c in ('"\\/bfnrt'):gmatch('.') do ESCAPED[c:byte()] = true end

local function skipv(s, i, depth)
  if depth > 64 then error('too deep') end
  local c = byte(s, i)
  if c == 34 then
    local j = i + 1
    while true do
      local a = find(s, '["\\%c]', j)
      if not a then error('unterminated string') end
      local d = byte(s, a)
      if d == 34 then return a + 1 end
      if d ~= 92 then error('control character in string') end
      d = byte(s, a + 1)
      if ESCAPED[d] then j = a + 2
      elseif d == 117 and find(s, '^%x%x%x%x', a + 2) then j = a + 6
      else error('bad escape') end
    end
  elseif c == 123 or c == 91 then
    local close = c + 2
    i = ws(s, i + 1)
    if byte(s, i) == close then return i + 1 end
    while true do
      if c == 123 then
        if byte(s, i) ~= 34 then error('expected a key') end
        i = ws(s, skipv(s, i, depth + 1))
        if byte(s, i) ~= 58 then error('expected :') end
        i = ws(s, i + 1)
      end
      i = ws(s, skipv(s, i, depth + 1))
      local d = byte(s, i)
      if d == close then return i + 1 end
      if d ~= 44 then error('expected a comma') end
      i = ws(s, i + 1)
    end
  end
  local _, e = find(s, '^[-+.%deEtrufalsn]+', i)
  if not e then error('unexpected character') end
  if not scalar(sub(s, i, e)) then error('bad literal') end
  return e + 1
end

-- The members of an object or the items of an array at s[i] (opened by byte `open`), gathered
-- into `out` by item(s, i, out), which answers the index after the one it read (nil: give up).
local function container(s, i, open, close, item, out)
  if byte(s, i) ~= open then return nil end
  i = ws(s, i + 1)
  if byte(s, i) == close then return out, i + 1 end
  while true do
    i = item(s, i, out)
    if not i then return nil end
    i = ws(s, i)
    local c = byte(s, i)
    if c == close then return out, i + 1 end
    if c ~= 44 then error('expected , or ' .. string.char(close)) end
    i = ws(s, i + 1)
  end
end

local function member(s, i, m)
  if byte(s, i) ~= 34 then error('expected a key') end
  local k
  k, i = str(s, i)
  i = ws(s, i)
  if byte(s, i) ~= 58 then error('expected :') end
  i = ws(s, i + 1)
  local e = skipv(s, i, 1)
  local lk = find(k, '%u') and k:lower() or k
  if m[lk] then return nil end
  m[lk] = { a = i, b = e - 1, k = k }
  return e
end

local function element(s, i, items)
  local e = skipv(s, i, 1)
  items[#items + 1] = { a = i, b = e - 1 }
  return e
end

local function members(s, i) return container(s, i, 123, 125, member, {}) end
local function elements(s, i) return container(s, i, 91, 93, element, {}) end

return { skip = skip, str = str, ws = ws, skipv = skipv, scalar = scalar, members = members, elements = elements }
