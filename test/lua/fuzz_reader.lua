-- How the gateway's Lua reads JSON-RPC bodies, for the differential fuzz (test/gatewayLua.test.ts):
-- one hex-encoded body per line on stdin, one JSON line per body on stdout with
--   policy  each call's methods as rpcstack/policy.lua reads them (JSON string texts), or null
--           when the policy refuses the body as unreadable
--   cache   per cached chain of gateway_data.lua: what the cache would answer from its store,
--           or null: { batch, calls = { { method, params, id } } } (the JSON texts it took for
--           each, params rebuilt from the spans of its arguments), and `alias`, the same for an
--           answer found by the body with its id cut out (rpcstack/cache_keys.lua unid)
-- Every final block is taken as known and every `after` answer as held, so each call the
-- reader can key is reported. Texts are hex: bodies need not be UTF-8.
local DATA = require 'gateway_data'
local policy = require 'rpcstack.policy'
local keys = require 'rpcstack.cache_keys'
local json = require 'rpcstack.json'

local held = setmetatable({}, { __index = function() return true end })
local views = {}
for name, c in pairs(DATA.cache.chains) do
  local ids = keys.IDS[DATA.cache.ids[c.kind]]
  views[name] = { name = name, rules = DATA.cache.rules[c.kind], ids = ids, final = math.maxinteger, stored = held }
end

local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end)) end
local function unhex(h) return (h:gsub('%x%x', function(x) return string.char(tonumber(x, 16)) end)) end
-- A string as a JSON string text, its bytes kept (the oracle decodes it as the nodes would).
local function quoted(s)
  return '"' .. s:gsub('[%c"\\]', function(c) return string.format('\\u%04x', c:byte()) end) .. '"'
end
local function list(xs) return '[' .. table.concat(xs, ',') .. ']' end
local function text(s) return '"' .. hex(s) .. '"' end

-- The params a call's key was made from, as one JSON text: the spans of its arguments.
local function params(s, m, rule)
  if not m.params then return '' end
  local items = json.elements(s, m.params.a)
  local out = {}
  if items then
    for i, it in ipairs(items) do out[i] = s:sub(it.a, it.b) end
    return '[' .. table.concat(out, ',') .. ']'
  end
  local named = json.members(s, m.params.a)
  for i, name in ipairs(rule.names) do out[i] = quoted(name) .. ':' .. s:sub(named[name].a, named[name].b) end
  return '{' .. table.concat(out, ',') .. '}'
end

-- Each call the cache would answer: the members of the call object whose id span is ida..idb.
local function calls(s, r)
  local out = {}
  for i, x in ipairs(r.calls) do
    local at = r.batch and json.elements(s, json.skip(s, 1))[i].a or json.skip(s, 1)
    local m = json.members(s, at)
    local method = x.key:match('^[^|]*|([^|]*)')
    out[i] = '{"method":' .. text(quoted(method)) .. ',"params":' .. text(params(s, m, x.rule))
      .. ',"id":' .. text(s:sub(x.ida, x.idb)) .. '}'
  end
  return list(out)
end

local function cached(view, s)
  local r = keys.read(view, s)
  local direct = r and ('{"batch":' .. tostring(r.batch) .. ',"calls":' .. calls(s, r) .. '}') or 'null'
  -- An alias is recorded by a body equal to this one but for its id, when that id is where unid cut.
  local alias = 'null'
  local mk, a, b = keys.unid(view, s)
  if mk then
    local other = s:sub(1, a - 1) .. '1' .. s:sub(b + 1)
    local o = keys.read(view, other)
    if o and not o.batch and o.calls[1].ida == a and o.calls[1].idb == a then
      local m = json.members(other, json.skip(other, 1))
      alias = '{"batch":false,"calls":[{"method":' .. text(quoted(o.calls[1].key:match('^[^|]*|([^|]*)')))
        .. ',"params":' .. text(params(other, m, o.calls[1].rule)) .. ',"id":' .. text(s:sub(a, b)) .. '}]}'
    end
  end
  return '{"direct":' .. direct .. ',"alias":' .. alias .. '}'
end

for line in io.lines() do
  local s = unhex(line)
  local read = policy.read(s)
  local p = 'null'
  if read then
    local out = {}
    for i, methods in ipairs(read) do
      local ms = {}
      for j, m in ipairs(methods) do ms[j] = text(quoted(m)) end
      out[i] = list(ms)
    end
    p = list(out)
  end
  local c = {}
  for name, view in pairs(views) do c[#c + 1] = '"' .. name .. '":' .. cached(view, s) end
  io.write('{"policy":', p, ',"cache":{', table.concat(c, ','), '}}\n')
end
