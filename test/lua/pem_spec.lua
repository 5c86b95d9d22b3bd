-- A certificate and key pair checked before it is swapped in (gateway/lua/rpcstack/pem.lua), on
-- keys and certificates OpenSSL makes in each format an ACME client may write.
local pem = require('rpcstack.pem')

local dir = os.tmpname()
os.remove(dir)
assert(os.execute('mkdir -p ' .. dir))

local function sh(cmd)
  assert(os.execute('cd ' .. dir .. ' && ' .. cmd .. ' 2>/dev/null'), cmd)
end
local function read(name)
  local f = assert(io.open(dir .. '/' .. name))
  local s = f:read('a')
  f:close()
  return s
end
-- A key made by `make` (writing NAME.key) and a self-signed certificate for it.
local function pair(name, make)
  sh(make:gsub('KEY', name .. '.key'))
  sh('openssl req -x509 -key ' .. name .. '.key -subj /CN=' .. name .. ' -days 1 -out ' .. name .. '.crt')
  return read(name .. '.crt'), read(name .. '.key')
end

local KINDS = {
  ['EC, SEC1 (certbot)'] = 'openssl ecparam -name prime256v1 -genkey -noout -out KEY',
  ['EC, PKCS#8'] = 'openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out KEY',
  ['RSA, PKCS#8'] = 'openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out KEY',
  ['RSA, PKCS#1'] = 'openssl genrsa -traditional -out KEY 2048',
}

describe('check', function()
  local made = {}
  for kind, make in pairs(KINDS) do made[kind] = { pair(kind:gsub('%W', ''), make) } end

  for kind in pairs(KINDS) do
    it('takes a ' .. kind .. ' key with its own certificate, chain after it or key first', function()
      local crt, key = made[kind][1], made[kind][2]
      assert.is_nil(pem.check(crt .. key))
      assert.is_nil(pem.check(key .. crt))
      assert.is_nil(pem.check(crt .. made['EC, PKCS#8'][1] .. key))
    end)
    it('refuses a ' .. kind .. ' key with another certificate', function()
      local other = kind == 'RSA, PKCS#8' and 'RSA, PKCS#1' or 'RSA, PKCS#8'
      assert.equals('the private key does not belong to the certificate', pem.check(made[other][1] .. made[kind][2]))
      local same = kind:find('^EC') and 'EC' or 'RSA'
      local sibling = same == 'EC' and (kind == 'EC, PKCS#8' and 'EC, SEC1 (certbot)' or 'EC, PKCS#8') or other
      assert.equals('the private key does not belong to the certificate', pem.check(made[sibling][1] .. made[kind][2]))
    end)
  end

  it('refuses what is not one certificate and one key, and PEM that is not DER', function()
    local crt, key = made['EC, PKCS#8'][1], made['EC, PKCS#8'][2]
    assert.equals('not a PEM certificate and one key', pem.check(crt))
    assert.equals('not a PEM certificate and one key', pem.check(crt .. key .. key))
    assert.equals('not a PEM certificate and one key', pem.check('add map keys.map X mallory'))
    local block = function(b64) return '-----BEGIN CERTIFICATE-----\n' .. b64 .. '\n-----END CERTIFICATE-----\n' end
    assert.equals('the certificate is not DER the gateway can read', pem.check(block('AAAA') .. key))
    assert.equals('a PEM block that is not base64', pem.check(block('*') .. key))
  end)

  it('refuses a key it cannot check (Ed25519) with a reason', function()
    local crt, key = pair('ed', 'openssl genpkey -algorithm ED25519 -out KEY')
    assert.equals('a private key of a kind the gateway cannot check', pem.check(crt .. key))
  end)

  it('decodes base64 as the standard says', function()
    assert.equals('rpcstack', pem.b64decode('cnBjc3RhY2s='))
    assert.equals('rpcstac', pem.b64decode('cnBjc3RhYw=='))
    assert.equals('rpc', pem.b64decode('cnBj'))
    assert.is_nil(pem.b64decode('cnB'))
  end)

  teardown(function() os.execute('rm -rf ' .. dir) end)
end)
