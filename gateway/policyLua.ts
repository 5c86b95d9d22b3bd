/**
 * The Lua half of the method policy (HAProxy's own Lua runtime, Debian's haproxy is built with
 * Lua 5.3). It reads the whole JSON-RPC body, as the node will, and sets:
 *   txn.rpc_verdict  "denied" | "batch" (too many calls) | "invalid" (not JSON it can check)
 *   txn.rpc_method   the first denied method, reduced to [a-z0-9_] for the error message
 * Strings are decoded (\u escapes included) and object keys compared ignoring case, and every
 * "method" key of a call is checked: Go's decoder matches keys case-insensitively and keeps the
 * last duplicate, JavaScript keeps the last, others the first.
 */
import { JSON_LUA } from "./luaJson.js";

export const POLICY_LUA = String.raw`
${JSON_LUA}
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
    local lit = s:match('^-?%d+%.?%d*[eE]?[-+]?%d*', i) or s:match('^true', i) or s:match('^false', i) or s:match('^null', i)
    if not lit or #lit == 0 then error('unexpected character') end
    return false, i + #lit
  end
end

local function listed(m, list)
  for _, e in ipairs(list) do
    if m == e or (e:sub(-1) == '_' and m:sub(1, #e) == e) then return true end
  end
  return false
end

core.register_action('rpc_policy', { 'http-req' }, function(txn, chain, max_batch)
  local p = POLICY[chain]
  local body = txn.f:req_body() or ''
  local ok, parsed, rest = pcall(value, body, 1, 0)
  if not ok or type(parsed) ~= 'table' or skip(body, rest) <= #body then
    txn:set_var('txn.rpc_verdict', 'invalid')
    return
  end
  local calls = parsed.items or { parsed }
  if #calls > tonumber(max_batch) then
    txn:set_var('txn.rpc_verdict', 'batch')
    return
  end
  -- A batch counts as its number of calls against the rate it is under: the key's (sc0) on a
  -- gateway path, the address's (sc1) on a public hostname, where no key is named.
  local sc = txn:get_var('txn.keyname') and 0 or 1
  for _ = 2, #calls do txn.f:sc_inc_gpc(0, sc) end
  for _, call in ipairs(calls) do
    for _, m in ipairs(type(call) == 'table' and call.methods or {}) do
      if type(m) == 'string' then
        local lm = m:lower()
        if listed(lm, p.deny) and not listed(lm, p.allow) then
          txn:set_var('txn.rpc_verdict', 'denied')
          txn:set_var('txn.rpc_method', (lm:gsub('[^a-z0-9_]', '')):sub(1, 80))
          return
        end
      end
    end
  end
end, 2)
`;
