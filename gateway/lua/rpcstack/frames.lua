-- Length-prefixed units in a stream the gateway relays (WebSocket frames, gRPC messages), read by
-- the Lua filters as the bytes pass (limits.lua, failover.lua).
--
--   forward(self, txn, msg, avail, peek) -> bytes
--     Forwards the units in the first avail bytes of msg: self:header(txn, h) reads a unit's
--     header from up to peek bytes and answers the header's and the unit's lengths, or nothing
--     while the header is not all in; self.left holds what is still to pass of the current unit.
--     Returns the bytes that may go on.
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

-- RFC 6455 5.2: a frame header's length (2 bytes, then a 16- or 64-bit length when the 7-bit one
-- says so, then the mask when the mask bit is set) and its payload length; nothing while not all in.
local function ws_header(h)
  if #h < 2 then return end
  local b2 = h:byte(2)
  local len, hlen = b2 & 127, 2
  if len == 126 then hlen = 4 elseif len == 127 then hlen = 10 end
  if b2 >= 128 then hlen = hlen + 4 end
  if #h < hlen then return end
  if len == 126 then len = string.unpack('>I2', h, 3) elseif len == 127 then len = string.unpack('>i8', h, 3) end
  return hlen, len
end

return { forward = forward, ws_header = ws_header }
