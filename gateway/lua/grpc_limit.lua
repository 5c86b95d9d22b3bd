-- A Lua filter (loaded by lua-load, named by gateway/limits.ts grpcFilter) on the backends that
-- relay gRPC. Closing is `txn:done()`, as in limits.lua, which says why.
-- forward: lets the first bytes of msg go on as their 5-byte prefixes pass (GrpcLimit:header).
local forward = require('rpcstack.stream').forward

-- gRPC (HTTP/2 request bodies relayed as a stream, not waited for): each message is a 5-byte
-- prefix (flag, 32-bit length) and its bytes. A message, or the stream's messages together, over
-- max end the stream before the message is forwarded; each message counts against the rate of
-- the stick counter `sc` (the address's), one call per started 64 KiB.
local GrpcLimit = { id = 'rpcstack grpc_limit', flags = filter.FLT_CFG_FL_HTX }
GrpcLimit.__index = GrpcLimit
local GRPC_CALL_BYTES = 65536

function GrpcLimit:new()
  return setmetatable({ left = 0, total = 0, max = self.max, rate = self.rate, sc = self.sc }, GrpcLimit)
end

function GrpcLimit:start_analyze(_, chn)
  if not chn:is_resp() then filter.register_data_filter(self, chn) end
end

function GrpcLimit:header(txn, h)
  if #h < 5 then return end
  local len = string.unpack('>I4', h, 2)
  self.total = self.total + 5 + len
  if len > self.max or self.total > self.max then txn:done() end
  for _ = 0, len // GRPC_CALL_BYTES do txn.f:sc_inc_gpc(0, self.sc) end
  if txn.f:sc_http_req_rate(self.sc) + txn.f:sc_gpc_rate(0, self.sc) > self.rate then txn:done() end
  return 5, len
end

function GrpcLimit:http_payload(txn, msg)
  return forward(self, txn, msg, msg:input(), 5)
end

-- filter lua.grpc_limit <max stream bytes> <calls per 10 s> <stick counter>
core.register_filter('grpc_limit', GrpcLimit, function(f, args)
  f.max, f.rate, f.sc = tonumber(args[1]), tonumber(args[2]), tonumber(args[3])
  return f
end)
