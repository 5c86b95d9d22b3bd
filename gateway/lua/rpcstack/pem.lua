-- Whether a PEM bundle's private key belongs to its first certificate, read in plain Lua: HAProxy
-- checks that when it loads a certificate file, but not when one is set at run time
-- (CertCache.set, `set ssl cert`), and a mismatched pair then fails every TLS handshake. The
-- public half is compared, as DER bytes: the certificate's subjectPublicKeyInfo against the one the
-- key carries (an EC key's `publicKey` field, an RSA key's modulus and exponent).
--
--   check(pem) -> nil | why   nil when the key matches the first certificate
local B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
local DIGIT = {}
for i = 1, #B64 do DIGIT[B64:sub(i, i)] = i - 1 end

local function b64decode(text)
  text = text:gsub('%s', '')
  if #text % 4 ~= 0 or text:find('[^%w+/=]') then return nil end
  local out = {}
  for i = 1, #text, 4 do
    local a, b = DIGIT[text:sub(i, i)], DIGIT[text:sub(i + 1, i + 1)]
    local c, d = text:sub(i + 2, i + 2), text:sub(i + 3, i + 3)
    if not a or not b then return nil end
    local n = a << 18 | b << 12 | (DIGIT[c] or 0) << 6 | (DIGIT[d] or 0)
    out[#out + 1] = string.char(n >> 16 & 255)
    if c ~= '=' then out[#out + 1] = string.char(n >> 8 & 255) end
    if d ~= '=' then out[#out + 1] = string.char(n & 255) end
  end
  return table.concat(out)
end

-- One DER element at s[i]: its tag, where its content starts and ends, and where the next begins.
local function element(s, i)
  local tag, len = s:byte(i), s:byte(i + 1)
  if not tag or not len then error('truncated DER') end
  local start = i + 2
  if len >= 0x80 then
    local n = len - 0x80
    if n < 1 or n > 4 then error('bad DER length') end
    len = 0
    for k = 0, n - 1 do len = len * 256 + (s:byte(start + k) or error('truncated DER')) end
    start = start + n
  end
  local stop = start + len - 1
  if stop > #s then error('truncated DER') end
  return tag, start, stop, stop + 1
end

-- The elements inside a constructed element s[start..stop].
local function children(s, start, stop)
  local out, i = {}, start
  while i <= stop do
    local tag, a, b, nxt = element(s, i)
    out[#out + 1] = { tag = tag, at = i, from = a, to = b }
    i = nxt
  end
  return out
end

local function content(s, e) return s:sub(e.from, e.to) end

-- The certificate's public key bits (subjectPublicKeyInfo's BIT STRING, unused-bits byte dropped).
local function certificateKey(der)
  local _, a, b = element(der, 1)
  local tbs = children(der, a, b)[1]
  local fields = children(der, tbs.from, tbs.to)
  -- version [0] is optional; then serial, signature, issuer, validity, subject, subjectPublicKeyInfo.
  local spki = fields[fields[1].tag == 0xA0 and 7 or 6]
  local bits = children(der, spki.from, spki.to)[2]
  return content(der, bits):sub(2)
end

local INTEGER, OCTETS, BITS, SEQUENCE = 0x02, 0x04, 0x03, 0x30

-- The public key bits a private key (SEC1, PKCS#1, or either inside PKCS#8) carries, or nil, why.
local function privateKeyPublic(der)
  local tag, a, b = element(der, 1)
  if tag ~= SEQUENCE then return nil, 'a private key of a kind the gateway cannot check' end
  local f = children(der, a, b)
  if f[2] and f[2].tag == SEQUENCE and f[3] and f[3].tag == OCTETS then
    -- PKCS#8: version, algorithm, the key itself as an octet string.
    return privateKeyPublic(content(der, f[3]))
  end
  if f[2] and f[2].tag == OCTETS then
    -- SEC1 ECPrivateKey: version 1, key, [0] parameters, [1] publicKey.
    for _, e in ipairs(f) do
      if e.tag == 0xA1 then
        local bits = children(der, e.from, e.to)[1]
        if bits and bits.tag == BITS then return content(der, bits):sub(2) end
      end
    end
    return nil, 'the EC key carries no public key to check against the certificate'
  end
  if f[2] and f[2].tag == INTEGER and f[3] and f[3].tag == INTEGER then
    -- PKCS#1 RSAPrivateKey: version, modulus, publicExponent, ...: the certificate holds
    -- RSAPublicKey { modulus, publicExponent } as DER.
    local body = der:sub(f[2].at, f[3].to)
    local len = #body
    local head = len < 128 and string.char(SEQUENCE, len)
      or len < 256 and string.char(SEQUENCE, 0x81, len)
      or string.char(SEQUENCE, 0x82, len >> 8, len & 255)
    return head .. body
  end
  return nil, 'a private key of a kind the gateway cannot check'
end

local function check(pem)
  local certs, keys = {}, {}
  for kind, body in pem:gmatch('%-%-%-%-%-BEGIN ([A-Z ]+)%-%-%-%-%-(.-)%-%-%-%-%-END %1%-%-%-%-%-') do
    local der = b64decode(body)
    if not der then return 'a PEM block that is not base64' end
    if kind == 'CERTIFICATE' then certs[#certs + 1] = der
    elseif kind:find('PRIVATE KEY$') then keys[#keys + 1] = der end
  end
  if #certs == 0 or #keys ~= 1 then return 'not a PEM certificate and one key' end
  local ok, cert = pcall(certificateKey, certs[1])
  if not ok then return 'the certificate is not DER the gateway can read' end
  local ok2, pub, why = pcall(privateKeyPublic, keys[1])
  if not ok2 then return 'the key is not DER the gateway can read' end
  if not pub then return why end
  if pub ~= cert then return 'the private key does not belong to the certificate' end
  return nil
end

return { check = check, b64decode = b64decode }
