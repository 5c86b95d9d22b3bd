-- A WebSocket whose node goes away is closed with a close frame its client can act on: 1012
-- (service restart, RFC 6455 7.4 and the IANA registry), so it reconnects, and the gateway sends
-- the new socket to a node in rotation. Without it the client would see the connection drop
-- without a close frame (1006), or, for a node that froze, nothing at all until the idle timeout.
--
-- The filter ws_gone sits on the WebSocket backends of chains with several nodes
-- (gateway/failover.ts) and reads the frames the node sends (unmasked, RFC 6455 5.2) as they
-- pass. When the node's side ends (killed, cut off, or marked down by its health check, which
-- ends the calls it holds: on-marked-down shutdown-sessions) HAProxy calls the data callback one
-- last time with nothing in and nothing more to come; if the node had not closed the socket
-- itself and no frame is half sent, a close frame goes to the client then.
-- Loaded by HAProxy's lua-load.

local forward = require('rpcstack.stream').forward
local ws_header = require('rpcstack.ws').header

-- FIN + opcode 8 (close), 2 bytes of payload: the status code.
local RESTART = string.char(0x88, 0x02) .. string.pack('>I2', 1012)

local WsGone = { id = 'rpcstack ws_gone', flags = filter.FLT_CFG_FL_HTX }
WsGone.__index = WsGone

function WsGone.new()
  return setmetatable({ left = 0, closed = false, upgrade = false }, WsGone)
end

-- The request's headers are gone from the buffer by the time the response starts: read them first.
function WsGone:start_analyze(txn, chn)
  if not chn:is_resp() then
    self.upgrade = txn.sf:hdr('upgrade') ~= ''
  elseif self.upgrade then
    filter.register_data_filter(self, chn)
  end
end

-- Notes a close frame from the node: then the socket ends as the node meant it to.
function WsGone:header(_, h)
  local hlen, len, op = ws_header(h)
  if op == 8 then self.closed = true end
  return hlen, len
end

function WsGone:tcp_payload(txn, chn)
  local msg = txn.http_res
  msg.__filter = chn.__filter
  local avail = chn:input()
  -- The end of the 101 response also comes with nothing in and nothing to receive, but with its
  -- end of message: the tunnel has not begun.
  if avail == 0 and not msg:may_recv() and not msg:eom() and not self.closed and self.left == 0 then
    self.closed = true
    msg:append(RESTART)
    return #RESTART
  end
  return forward(self, txn, msg, avail, 14)
end

core.register_filter('ws_gone', WsGone, function(f)
  return f
end)
