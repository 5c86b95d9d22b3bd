/**
 * WebSocket limits inside HAProxy's tunnel: a Lua filter (HAProxy's own Lua runtime) on the
 * backends that relay WebSockets. After the 101, HAProxy keeps calling a data filter's
 * `tcp_payload` callback with the client's bytes before it forwards them (src/http_ana.c sets
 * AN_REQ_FLT_XFER_DATA in the tunnel state; src/filters.c flt_xfer_data, 2.6 and 3.2 alike), so
 * the filter reads each frame header (RFC 6455 5.2) and forwards a frame only once its header has
 * passed:
 *   - a message (a frame, or the frames of a fragmented one) over `max` bytes: the socket is
 *     closed before any byte of that frame is forwarded;
 *   - each complete message adds one to the tracked counter's gpc 0 (the per-key rate that HTTP
 *     requests and batch calls share); a message over the rate closes the socket unforwarded;
 *   - a control frame over 125 bytes (a protocol error) closes it too.
 * grpc_limit does the same for gRPC messages (length-prefixed, gRPC over HTTP/2) in request
 * bodies, which are streamed rather than waited for: a message over `max` ends the stream.
 * Closing is `txn:done()`: `return filter.ERROR` does not work from a Lua payload callback (hlua.c
 * compares the returned -1 with an unsigned length and forwards everything instead).
 * Data reach the filter through `http_req:body()`, which needs the filter handle that HAProxy
 * puts on the channel argument (`__filter`); in HTTP mode the Channel functions refuse to read.
 */
export const WS_LIMIT_LUA = String.raw`
-- Lets the rest of the current frame or message through; true when the next header is not in yet.
local function pass(st, avail, pos)
  if st.left > 0 then
    local n = math.min(st.left, avail - pos)
    st.left, pos = st.left - n, pos + n
    if st.left > 0 then return pos, true end
  end
  return pos, pos >= avail
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

function WsLimit:tcp_payload(txn, chn)
  local msg = txn.http_req
  msg.__filter = chn.__filter
  local avail, pos = chn:input(), 0
  while true do
    local wait
    pos, wait = pass(self, avail, pos)
    if wait then return pos end
    local h = msg:body(pos, math.min(14, avail - pos)) or ''
    if #h < 2 then return pos end
    local b1, b2 = h:byte(1, 2)
    local len, hlen = b2 & 127, 2
    if len == 126 then hlen = 4 elseif len == 127 then hlen = 10 end
    if b2 >= 128 then hlen = hlen + 4 end
    if #h < hlen then return pos end
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
    self.left, pos = len, pos + hlen
  end
end

-- gRPC (HTTP/2 request bodies relayed as a stream, not waited for): each message is a 5-byte
-- prefix (flag, 32-bit length) and its bytes; one over max ends the stream before it is forwarded.
local GrpcLimit = { id = 'rpcstack grpc_limit', flags = filter.FLT_CFG_FL_HTX }
GrpcLimit.__index = GrpcLimit

function GrpcLimit:new()
  return setmetatable({ left = 0, max = self.max }, GrpcLimit)
end

function GrpcLimit:start_analyze(txn, chn)
  if not chn:is_resp() then filter.register_data_filter(self, chn) end
end

function GrpcLimit:http_payload(txn, msg)
  local avail, pos = msg:input(), 0
  while true do
    local wait
    pos, wait = pass(self, avail, pos)
    if wait then return pos end
    local h = msg:body(pos, math.min(5, avail - pos)) or ''
    if #h < 5 then return pos end
    local len = string.unpack('>I4', h, 2)
    if len > self.max then txn:done() end
    self.left, pos = len, pos + 5
  end
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
`;
