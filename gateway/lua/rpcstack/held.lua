-- WebSocket messages the ws_limit filter (limits.lua) holds while their rest is on its way: how
-- many each client address holds, for the whole gateway (lua-load runs one Lua state for every
-- thread), and whether a socket's client is gone while it holds one.
--
--   count(src, delta) -> n   the address's sockets holding part of a message, after adding delta;
--                            an address back at none leaves the table
--   client_gone(req, chn, buffer) -> bool
--       req: the request Channel (txn.req, no filter view); chn: the filter's channel argument;
--       buffer: { size = tune.bufsize, reserve = tune.maxrewrite }. A channel that may not
--       receive says its client closed its side, but it says the same once the buffer reaches its
--       reserve (a node reading slowly, the client sending on): only a buffer clearly below the
--       reserve, input and output together, means the client is gone.
local counts = {}

local function count(src, delta)
  local n = (counts[src] or 0) + delta
  counts[src] = n > 0 and n or nil
  return n
end

local function client_gone(req, chn, buffer)
  if chn:may_recv() then return false end
  return req:input() + req:output() + 2 * buffer.reserve < buffer.size
end

return { count = count, client_gone = client_gone }
