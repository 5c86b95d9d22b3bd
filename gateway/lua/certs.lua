-- The one thing the ACME client may ask of HAProxy: serve a new certificate. A TCP service on a
-- socket of its own (the runtime API, which `set ssl cert` needs at level admin, also lets its
-- holder add keys to the key map or disable servers, so it is not shared): the client writes a
-- PEM (certificate chain and key), a line holding only END_LINE, and closes its side; the service
-- swaps it in for the gateway's certificate file, as `set ssl cert` + `commit ssl cert` would,
-- without a reload, and answers "ok" or "refused: <why>". Nothing else can be asked. The key is
-- checked against the certificate first (rpcstack/pem.lua): HAProxy does not check a pair set at
-- run time, and a mismatched one fails every handshake. Loaded by HAProxy's lua-load; the file's
-- name comes from the stack's generated data (gateway_data.lua).
local CERT_FILE = require('gateway_data').cert_file
local check = require('rpcstack.pem').check

-- A chain of a few certificates and a key; anything longer is not one.
local MAX_PEM = 64 * 1024

-- Where the PEM ends. HAProxy 3.2's TCP applets often miss the client's close when it comes with
-- the data (receive() and getline() then wait for ever), so the client says where it ends; a close
-- that is seen ends it too. A first line that begins no PEM block is refused at once.
local END_LINE = '.'

core.register_service('cert_update', 'tcp', function(applet)
  local parts, size = {}, 0
  while size <= MAX_PEM do
    -- A line is at most a buffer: past the bound, nothing more is read.
    local data = applet:getline()
    if not data or data == '' or data:gsub('\r?\n$', '') == END_LINE then break end
    if size == 0 and not data:find('-----BEGIN ', 1, true) then
      parts[1] = data
      break
    end
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
    -- The Lua API names the PEM's field `crt`; HAProxy 3.2.26 refuses that name ("Unsupported field
    -- 'crt'") and takes the PEM under the empty name, its certificate extension table's first entry.
    local ok, err = true, nil
    if not why then ok, err = pcall(CertCache.set, { filename = CERT_FILE, crt = pem }) end
    if not ok and tostring(err):find("Unsupported field 'crt'", 1, true) then
      ok, err = pcall(CertCache.set, { filename = CERT_FILE, [''] = pem })
    end
    if not ok then why = tostring(err):gsub('%s+', ' ') end
  end
  applet:send(why and ('refused: ' .. why .. '\n') or 'ok\n')
end)
