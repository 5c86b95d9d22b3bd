-- How a WebSocket the ws_limit filter watches (limits.lua) ends, and what the node sends it:
-- the close frames and their reasons, a socket ended after the messages before a refused one, a
-- revoked key's socket, and the node's side of every socket (answers to refused calls replaced,
-- the client told why its socket ends). Methods of the filter's class, installed by install().
local ws = require 'rpcstack.ws'

local M = {}
local Ending = {}
-- What node_payload reads of the filter's surroundings: the key map, the badges' clock skew and
-- the marker ids' prefix (set by install()).
local deps = {}

-- Every close drops what the filter holds first: txn:done() erases the buffer, but the filter's
-- offsets still count the held bytes as due to the node, which HAProxy then schedules (a channel
-- input of -1008 for 1,008 bytes held), and the stream spins while the node side stays open.
function M.close(txn, msg, chn)
  msg:remove(0, chn:input())
  txn:done()
end
local close = M.close

-- Why a socket is ended before a message: a close reason (RFC 6455 7.4.1: 1008, policy violation).
M.WHY = {
  RATE_PAST = 'rate limit exceeded for this project key',
  QUOTA_PAST = 'quota exceeded for this project key',
  ALLOWANCE_PAST = "badge's allowance spent",
  QUOTA_PERIOD = 'quota period ended: open a new socket',
  TOO_LARGE = 'message too large',
  UNREADABLE = 'message the gateway cannot read',
  BATCH_TOO_LARGE = 'batch too large',
  TOO_MANY_HELD = 'too many unfinished messages from this address',
}

-- The client is gone holding part of a message it can never finish: that part is dropped, the whole
-- messages before it (`keep` bytes) go on, and the stream ends as a tunnel its client closed does.
function Ending:drop_unfinished(txn, msg, chn, keep, avail)
  if avail > keep then msg:remove(keep, avail - keep) end
  self.need = 0
  self:unfinished(txn, false, msg, chn)
  return keep
end

-- A message refused for the rate, the quota or an allowance ends the socket, but the messages
-- before it in the same read (`keep` bytes, counted and let through) go on: the node gets a close
-- frame in place of the refused message and of everything after it, so that it answers the calls
-- before it and then its close, which node_payload turns into the client's close frame with the
-- reason. Nothing the client sends after that reaches the node, nor counts.
function Ending:end_before(txn, msg, chn, keep, why)
  local avail = chn:input()
  local f = ws.close(1008, why, string.pack('>I4', math.random(0, 0xffffffff)))
  -- No room for the close frame (a node that stopped reading): closed at once, as before.
  if msg:set(f, keep, avail - keep) == -1 then close(txn, msg, chn) end
  self.ending, self.need = ws.close(1008, why), 0
  self:unfinished(txn, false, msg, chn)
  return keep + #f
end

-- A message the gateway cannot relay (too large, unreadable, a batch too large, one unfinished
-- message too many): the socket ends, after the whole messages before it in the same read (`keep`
-- bytes, already counted) when there are any; else at once, as a protocol error.
function Ending:refuse_rest(txn, msg, chn, keep, why)
  if keep == 0 then close(txn, msg, chn) end
  return self:end_before(txn, msg, chn, keep, why)
end

-- The client's bytes once its socket is ending: dropped; once it has had the close frame, its
-- answer ends the stream.
function Ending:after_end(txn, msg, chn)
  if self.closing then close(txn, msg, chn) end
  msg:remove(0, chn:input())
  return 0
end

-- Close frames: 1008 (policy violation, RFC 6455 7.4.1) and why.
local BADGE_CLOSE = ws.close(1008, 'badge expired')
local REVOKED_CLOSE = ws.close(1008, 'project key revoked')

-- The client's bytes on a socket whose key was revoked go no further. The first time, the node
-- gets a close frame in their place, so that it answers one: node_payload turns that answer into
-- the client's close frame with the reason. Once the client has had it, its reply ends the socket.
function Ending:revoked(txn, msg, chn)
  if self.closing then close(txn, msg, chn) end
  local avail = chn:input()
  if self.told then
    msg:remove(0, avail)
    return 0
  end
  self.told = true
  local f = ws.close(1008, 'project key revoked', string.pack('>I4', math.random(0, 0xffffffff)))
  msg:set(f, 0, avail)
  return #f
end

-- The node's side of a socket: frames pass whole (rpcstack.stream), and while an answer to a
-- refused call is due, each whole text frame up to `max` bytes is read and that answer replaced
-- (ws.reanswer); larger frames pass unread. On a badge socket whose badge has expired, or a socket
-- whose key was revoked, the client gets a close frame instead of the next frame and nothing after it.
function Ending:node_payload(txn, chn)
  local msg = txn.http_res
  msg.__filter = chn.__filter
  local avail = chn:input()
  if self.closing then
    msg:remove(0, avail)
    return 0
  end
  local d = self.down or { left = 0 }
  self.down = d
  local why = self.digest and not deps.keys:lookup(self.digest) and REVOKED_CLOSE
    or self.badge and os.time() > self.badge.exp + deps.skew and BADGE_CLOSE
  if why and d.left == 0 and avail > 0 then
    self.closing = true
    msg:set(why, 0, avail)
    return #why
  end
  local pos = 0
  while true do
    if d.left > 0 then
      local n = math.min(d.left, avail - pos)
      d.left, pos = d.left - n, pos + n
      if d.left > 0 then return pos end
    end
    if pos >= avail then return pos end
    local hlen, len, op, fin = ws.header(msg:body(pos, math.min(14, avail - pos)) or '')
    if not hlen then return pos end
    if self.ending and op == 8 then
      -- The node's answer to the close frame end_before sent it: the client gets the reason.
      if avail - pos < hlen + len then return pos end
      msg:set(self.ending, pos, avail - pos)
      self.closing = true
      return pos + #self.ending
    end
    if self.refused.n > 0 and op == 1 and fin and len <= self.max then
      if avail - pos < hlen + len then return pos end
      local text = ws.reanswer(msg:body(pos + hlen, len) or '', self.refused, deps.mark .. self.nonce)
      local new = text and ws.frame(text) or nil
      if new then msg:set(new, pos, hlen + len) end
      avail = avail + (new and #new - hlen - len or 0)
      pos = pos + (new and #new or hlen + len)
    else
      d.left, pos = len, pos + hlen
    end
  end
end

-- The methods above, on the filter's class `class`; `keys` the key map (Map), `skew` the badges'
-- clock skew in seconds, `mark` the marker ids' prefix.
function M.install(class, keys, skew, mark)
  deps.keys, deps.skew, deps.mark = keys, skew, mark
  for name, fn in pairs(Ending) do class[name] = fn end
end

return M
