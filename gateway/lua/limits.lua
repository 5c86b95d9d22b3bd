-- WebSocket limits inside HAProxy's tunnel: a Lua filter (HAProxy's own Lua runtime) on the
-- backends that relay WebSockets. After the 101, HAProxy keeps calling a data filter's
-- `tcp_payload` callback with the client's bytes before it forwards them (src/http_ana.c sets
-- AN_REQ_FLT_XFER_DATA in the tunnel state; src/filters.c flt_xfer_data, 2.6 and 3.2 alike), so
-- the filter reads each frame header (RFC 6455 5.2) and forwards a frame only once its header has
-- passed:
--   - a message (a frame, or the frames of a fragmented one) over `max` bytes: the socket is
--     closed before any byte of that frame is forwarded;
--   - each complete message adds one to the tracked counter's gpc 0 (the per-key rate that HTTP
--     requests and batch calls share); a message over the rate closes the socket unforwarded;
--   - a control frame over 125 bytes (a protocol error) closes it too.
-- grpc_limit does the same for gRPC messages (length-prefixed, gRPC over HTTP/2) in request
-- bodies, which are streamed rather than waited for: a message over `max` ends the stream.
-- Closing is `txn:done()`: `return filter.ERROR` does not work from a Lua payload callback (hlua.c
-- compares the returned -1 with an unsigned length and forwards everything instead).
-- Data reach the filter through `http_req:body()`, which needs the filter handle that HAProxy
-- puts on the channel argument (`__filter`); in HTTP mode the Channel functions refuse to read.
-- Loaded by HAProxy's lua-load; the backends name the filters (gateway/limits.ts).

-- Forwards the length-prefixed units (WebSocket frames, gRPC messages) in the first avail bytes
-- of msg: self:header(txn, h) reads a unit's header from up to peek bytes and answers the header's
-- and the unit's lengths, or nothing while the header is not all in. Returns the bytes that may go on.
local function forward(self, txn, msg, avail, peek)
  local pos = 0
  while true do
    if self.left > 0 then
      local n = math.min(self.left, avail - pos)
      self.left, pos = self.left - n, pos + n
      if self.left > 0 then return pos end
    end
    if pos >= avail then return pos end
    local hlen, len = self:header(txn, msg:body(pos, math.min(peek, avail - pos)) or '')
    if not hlen then return pos end
    self.left, pos = len, pos + hlen
  end
end

local WsLimit = { id = 'rpcstack ws_limit', flags = filter.FLT_CFG_FL_HTX }
WsLimit.__index = WsLimit

function WsLimit:new()
  return setmetatable({ left = 0, size = 0, max = self.max, rate = self.rate, sc = self.sc }, WsLimit)
end

-- Only upgrades are filtered: plain HTTP through the same backend is not touched.
function WsLimit:start_analyze(txn, chn)
  if not chn:is_resp() and txn.sf:hdr('upgrade') ~= '' then filter.register_data_filter(self, chn) end
end

-- RFC 6455 5.2: 2 bytes, then a 16- or 64-bit length when the 7-bit one says so, then the mask.
function WsLimit:header(txn, h)
  if #h < 2 then return end
  local b1, b2 = h:byte(1, 2)
  local len, hlen = b2 & 127, 2
  if len == 126 then hlen = 4 elseif len == 127 then hlen = 10 end
  if b2 >= 128 then hlen = hlen + 4 end
  if #h < hlen then return end
  if len == 126 then len = string.unpack('>I2', h, 3) elseif len == 127 then len = string.unpack('>i8', h, 3) end
  local op = b1 & 15
  if op >= 8 then
    if len > 125 then txn:done() end
  else
    self.size = (op == 0 and self.size or 0) + len
    if len < 0 or self.size > self.max then txn:done() end
    if b1 >= 128 then
      txn.f:sc_inc_gpc(0, self.sc)
      if txn.f:sc_http_req_rate(self.sc) + txn.f:sc_gpc_rate(0, self.sc) > self.rate then txn:done() end
    end
  end
  return hlen, len
end

function WsLimit:tcp_payload(txn, chn)
  local msg = txn.http_req
  msg.__filter = chn.__filter
  return forward(self, txn, msg, chn:input(), 14)
end

-- gRPC (HTTP/2 request bodies relayed as a stream, not waited for): each message is a 5-byte
-- prefix (flag, 32-bit length) and its bytes; one over max ends the stream before it is forwarded.
local GrpcLimit = { id = 'rpcstack grpc_limit', flags = filter.FLT_CFG_FL_HTX }
GrpcLimit.__index = GrpcLimit

function GrpcLimit:new()
  return setmetatable({ left = 0, max = self.max }, GrpcLimit)
end

function GrpcLimit:start_analyze(_, chn)
  if not chn:is_resp() then filter.register_data_filter(self, chn) end
end

function GrpcLimit:header(txn, h)
  if #h < 5 then return end
  local len = string.unpack('>I4', h, 2)
  if len > self.max then txn:done() end
  return 5, len
end

function GrpcLimit:http_payload(txn, msg)
  return forward(self, txn, msg, msg:input(), 5)
end

core.register_filter('grpc_limit', GrpcLimit, function(f, args)
  f.max = tonumber(args[1])
  return f
end)

-- filter lua.ws_limit <max message bytes> <messages + requests per 10 s> <stick counter>
core.register_filter('ws_limit', WsLimit, function(f, args)
  f.max, f.rate, f.sc = tonumber(args[1]), tonumber(args[2]), tonumber(args[3])
  return f
end)
