-- wrk: eth_getBlockByNumber for a block number no request asked before (every request a miss),
-- counting up from args[1], with full transactions unless args[2] is "false" (small answers); the
-- path is the URL's.
local n
local full

function init(args)
  n = tonumber(args[1])
  full = args[2] ~= 'false'
end

function request()
  n = n + 1
  local body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",%s]}', n, n, tostring(full))
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
