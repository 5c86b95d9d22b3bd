-- wrk: eth_getBlockByNumber with full transactions for a block number no request asked before
-- (every request a miss), counting up from args[1]; the path is the URL's.
local n

function init(args)
  n = tonumber(args[1])
end

function request()
  n = n + 1
  local body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",true]}', n, n)
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
