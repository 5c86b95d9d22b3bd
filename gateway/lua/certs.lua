-- The one thing the ACME client may ask of HAProxy: serve a new certificate. An HTTP service on a
-- socket of its own (the runtime API, which `set ssl cert` needs at level admin, also lets its
-- holder add keys to the key map or disable servers, so it is not shared): the client POSTs a PEM
-- (certificate chain and key) with its Content-Length, which the frontend bounds and waits for
-- whole before the service runs (gateway/tls.ts); the service checks that the key belongs to the
-- first certificate (rpcstack/pem.lua: HAProxy does not check a pair set at run time, and a
-- mismatched one fails every handshake), swaps it in for the gateway's certificate file, as
-- `set ssl cert` + `commit ssl cert` would, without a reload, and answers "ok" or "refused: <why>".
-- HTTP rather than a raw stream: HAProxy 3.2's TCP applets can miss a client's close that comes
-- with its data and wait for ever. Loaded by HAProxy's lua-load; the file's name comes from the
-- stack's generated data (gateway_data.lua).
local CERT_FILE = require('gateway_data').cert_file
local check = require('rpcstack.pem').check

local function swap(pem)
  if not pem:find('-----BEGIN CERTIFICATE-----', 1, true) or not pem:find('PRIVATE KEY-----', 1, true) then
    return 'not a PEM certificate and key'
  end
  -- Under pcall: a fault in the check is a refusal that says so, never a service that dies.
  local checked, why = pcall(check, pem)
  if not checked then return 'the key check failed: ' .. tostring(why) end
  if why then return why end
  -- The Lua API names the PEM's field `crt`; HAProxy 3.2.26 refuses that name ("Unsupported field
  -- 'crt'") and takes the PEM under the empty name, its certificate extension table's first entry.
  local ok, err = pcall(CertCache.set, { filename = CERT_FILE, crt = pem })
  if not ok and tostring(err):find("Unsupported field 'crt'", 1, true) then
    ok, err = pcall(CertCache.set, { filename = CERT_FILE, [''] = pem })
  end
  if not ok then return (tostring(err):gsub('%s+', ' ')) end
  return nil
end

core.register_service('cert_update', 'http', function(applet)
  local why = swap(applet:receive() or '')
  local answer = why and ('refused: ' .. why .. '\n') or 'ok\n'
  applet:set_status(why and 422 or 200)
  applet:add_header('content-type', 'text/plain')
  applet:add_header('content-length', tostring(#answer))
  applet:start_response()
  applet:send(answer)
end)
