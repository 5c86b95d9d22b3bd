-- The secret of the gateway's internal listeners (gateway/internal.ts): HAProxy draws it at start
-- into a process variable, and each listener refuses a request without it. The Lua programs that
-- call a listener with the httpclient (refusals.lua, cache.lua) sign their requests here.
--
--   signer(get_var) -> sign      get_var: HAProxy's core.get_var
--   sign(headers) -> headers     a copy of an httpclient headers table, with the secret added
local NAMES = require('gateway_data').internal

local function signer(get_var)
  local secret
  return function(headers)
    -- Read at the first request: the global set-var may follow the lua-load lines.
    secret = secret or { get_var(NAMES.var) }
    local signed = {}
    for k, v in pairs(headers or {}) do signed[k] = v end
    signed[NAMES.header] = secret
    return signed
  end
end

return { signer = signer }
