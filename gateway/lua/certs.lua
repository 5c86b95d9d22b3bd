-- The one thing the ACME client may ask of HAProxy: serve a new certificate. A TCP service on a
-- socket of its own (the runtime API, which `set ssl cert` needs at level admin, also lets its
-- holder add keys to the key map or disable servers, so it is not shared): the client writes a
-- PEM (certificate chain and key) and closes its side; the service swaps it in for the gateway's
-- certificate file, as `set ssl cert` + `commit ssl cert` would, without a reload, and answers
-- "ok" or "refused: <why>". Nothing else can be asked. The key is checked against the certificate
-- first (rpcstack/pem.lua): HAProxy does not check a pair set at run time, and a mismatched one
-- fails every handshake. Loaded by HAProxy's lua-load; the file's name comes from the stack's
-- generated data (gateway_data.lua).
local CERT_FILE = require('gateway_data').cert_file
local check = require('rpcstack.pem').check

-- A chain of a few certificates and a key; anything longer is not one.
local MAX_PEM = 64 * 1024

core.register_service('cert_update', 'tcp', function(applet)
  -- Never more than one byte past the bound is read: a longer stream is refused unread.
  local parts, size = {}, 0
  while size <= MAX_PEM do
    local data = applet:receive(MAX_PEM + 1 - size)
    if not data or data == '' then break end
    parts[#parts + 1] = data
    size = size + #data
  end
  local pem = table.concat(parts)
  local why
  if size > MAX_PEM then
    why = 'longer than ' .. MAX_PEM .. ' bytes'
  elseif not pem:find('-----BEGIN CERTIFICATE-----', 1, true) or not pem:find('PRIVATE KEY-----', 1, true) then
    why = 'not a PEM certificate and key'
  else
    why = check(pem)
    if not why then
      local ok, err = pcall(CertCache.set, { filename = CERT_FILE, crt = pem })
      if not ok then why = tostring(err):gsub('%s+', ' ') end
    end
  end
  applet:send(why and ('refused: ' .. why .. '\n') or 'ok\n')
end)
