-- Length-prefixed units in a stream the gateway relays (gRPC messages, WebSocket frames), read by
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

return { forward = forward }
