-- WebSocket limits inside HAProxy's tunnel: a Lua filter (HAProxy's own Lua runtime) on the
-- backends that relay WebSockets. After the 101, HAProxy keeps calling a data filter's
-- `tcp_payload` callback with the client's bytes before it forwards them (src/http_ana.c sets
-- AN_REQ_FLT_XFER_DATA in the tunnel state; src/filters.c flt_xfer_data, 2.6 and 3.2 alike), so
-- the filter holds each client message until all its frames are in (RFC 6455 5.2; a message is
-- at most `max` bytes, which the buffers hold), reads it as the node will (rpcstack/ws.lua) and
-- only then lets it go on:
--   - a message over `max` bytes, a control frame over 125 bytes, a message that is not JSON the
--     gateway can read, or a batch over the chain's maxBatch: the socket is closed, unforwarded;
--   - each call adds one to the tracked counter's gpc 0 (the per-key rate that HTTP requests and
--     batch calls share; on Cosmos hostnames the address's); a message past the rate, the key's
--     quota or a badge's allowance is not forwarded and ends the socket, after the messages
--     before it (end_before); a key's usage (gateway/usage.ts) and quota count what goes on;
--   - calls the chain's method policy denies, subscriptions past the socket's or the key's
--     cap, and filters past the key's bound (rpcstack/filter_budget.lua, shared with HTTP calls),
--     are rewritten into calls of a method no node serves: the node answers each with a JSON-RPC
--     error, and the message's other calls go through. A denied call goes under a marker id of
--     the socket's; the node's frames are read while a marked answer is due, and the answer is
--     replaced by the gateway's own error with the call's id and method as sent
--     (rpcstack/answers.lua);
--   - on a socket opened with a badge (gateway/badges.ts), each call also counts against the
--     badge's allowance (rpcstack/badge_ledger.lua, shared with the HTTP path): past its expiry
--     the socket is closed before the message is forwarded. The node's
--     frames are watched too, so a socket that only receives (a subscription) is closed at the
--     first frame after the badge expired.
--   - a socket opened with a project key whose key is revoked (deleted from the key map through
--     the runtime API) gets a close frame `1008 project key revoked` at its next frame either way,
--     and nothing more of its messages reaches the node.
-- How a socket ends, and the node's side of it, are in rpcstack/ws_end.lua.
-- Closing is `txn:done()`: `return filter.ERROR` does not work from a Lua payload callback (hlua.c
-- compares the returned -1 with an unsigned length and forwards everything). Data are read with
-- `http_req:body()` and the filter handle HAProxy puts on the channel argument (`__filter`): in
-- HTTP mode the Channel functions refuse to read. Loaded by lua-load; the backends name the
-- filters (gateway/limits.ts); each chain's rules come from the generated gateway_data.lua.
local ws = require 'rpcstack.ws'
local held = require 'rpcstack.held'
local ending = require 'rpcstack.ws_end'
local close, WHY = ending.close, ending.WHY
local DATA = require('gateway_data')
local RULES = DATA.ws
local LEDGER = DATA.badges
  and require('rpcstack.badge_ledger').shared(DATA.badges.max_held, DATA.badges.skew, DATA.badges.projects)
local FILTERS = DATA.filters and require('rpcstack.filter_budget').shared(DATA.filters.max, DATA.filters.window)
-- The key map the configuration reads: the same map, so a runtime API change is seen here at once.
local KEYS = DATA.key_map and Map.new(DATA.key_map, Map._str)
-- The quota map (`<name> <calls> <day|month>`, gateway/quotas.ts), read the same way: a quota
-- changed through the runtime API applies to an open socket's next message.
local QUOTAS = DATA.quota_map and Map.new(DATA.quota_map, Map._str)
-- What the key spent before this process and on the other gateway replicas (quota_used.map, kept
-- by the usage keeper): read at each message, as the replicas' counts move on.
local USED = DATA.quota_used_map and Map.new(DATA.quota_used_map, Map._str)
-- What the other gateway replicas counted for each key in their rate windows (rate_others.map,
-- kept by the usage keeper where replicas share rates): added to the key's own count.
local RATE_OTHERS = DATA.rate_others_map and Map.new(DATA.rate_others_map, Map._str)

-- Subscriptions opened on the open sockets of each key (on Cosmos hostnames, of each address):
-- one Lua state serves every thread (lua-load), so this is the whole gateway's count.
local OPEN = {}
-- Frame headers cost bytes too: a message cut into tiny frames must still fit the buffer.
local FRAMING_ROOM = 4096

local WsLimit = { id = 'rpcstack ws_limit', flags = filter.FLT_CFG_FL_HTX }
WsLimit.__index = WsLimit

-- Marker ids start so; the socket's own random part keeps a client from guessing one.
local MARK = '"rpcstack-refused-'

function WsLimit:new()
  local f = setmetatable({
    subs = 0, need = 0, max = self.max, rate = self.rate, sc = self.sc, usage = self.usage, quota_sc = self.quota_sc,
    rules = self.rules, socket_max = self.socket_max, key_max = self.key_max,
    unfinished_max = self.unfinished_max, unfinished_s = self.unfinished_s,
    refused = { n = 0 }, marked = 0, nonce = string.format('%05x%06x', core.now().usec, math.random(0, 0xffffff)),
  }, WsLimit)
  -- What ws.check reads of the subscriptions and filters, refreshed for each message; the key's
  -- filter budget is asked only for a message that creates one.
  f.view = { socket_max = f.socket_max, key_max = f.key_max }
  f.filters_left = function()
    f.now = os.time()
    return FILTERS:left(f.key, f.now)
  end
  f.mark = function(answer)
    f.marked = f.marked + 1
    local id = MARK .. f.nonce .. '-' .. f.marked .. '"'
    f.refused[id], f.refused.n = answer, f.refused.n + 1
    return id
  end
  return f
end

-- Only upgrades are filtered: plain HTTP through the same backend is not touched.
function WsLimit:start_analyze(txn, chn)
  if not chn:is_resp() and txn.sf:hdr('upgrade') ~= '' then
    -- Whose subscriptions these are: the key's, a badge's own (per page, not per project), or on
    -- Cosmos hostnames the address's.
    -- The address as every per-address limit counts it (an IPv6 address's /64, gateway/limits.ts).
    self.src = txn:get_var('txn.client') or tostring(txn.f:src())
    self.who = txn:get_var('txn.ws_owner') or ('address ' .. self.src)
    -- Whose filters: the key's (a badge's project's), as over HTTP (filters.lua).
    self.key = txn:get_var('txn.keyname') or self.who
    -- A badge project's own rate (gateway/limits.ts OWN_RATE_VAR), else the filter's.
    self.rate = tonumber(txn:get_var('txn.rate_max')) or self.rate
    -- The key's quota as HAProxy read it at the handshake (gateway/quotas.ts): its period's entry
    -- is the one sc5 tracks for the socket's life, so it counts until that period's end.
    self.quota = self.quota_sc and tonumber(txn:get_var('txn.quota_limit'))
    self.quota_before = tonumber(txn:get_var('txn.quota_before')) or 0
    self.quota_entry = txn:get_var('txn.quota_entry')
    self.quota_end = self.quota and tonumber(txn:get_var('txn.quota_reset'))
    local digest = KEYS and txn:get_var('txn.key_digest')
    if digest and KEYS:lookup(digest) then self.digest = digest end
    local jti = LEDGER and txn:get_var('txn.badge_jti')
    if jti then
      local exp, alw = txn:get_var('txn.badge_exp'), txn:get_var('txn.badge_alw')
      self.badge = { jti = jti, exp = tonumber(exp), alw = tonumber(alw) }
    end
    filter.register_data_filter(self, chn)
  elseif chn:is_resp() and self.who then
    -- The node's frames: for badge expiry, and for answers to refused calls.
    filter.register_data_filter(self, chn)
  end
end

-- The key's quota now, as the map has it: its calls, or nil when it has none (any more).
function WsLimit:quota_now()
  local q = QUOTAS and self.quota_sc and QUOTAS:lookup(self.key)
  return q and tonumber(q:match('^(%d+)'))
end

-- Whether a message's calls may go on under the key's quota: nil (they may), 'over' (they would
-- take the key past it: refused uncounted) or 'reopen'. The
-- quota is the map's at this message: raised, lowered or removed since the handshake. The
-- period's entry is tracked from the handshake, so a socket whose period has ended, or whose key
-- got a quota it was not opened under, is closed before the message goes on ('reopen'): the
-- client's next handshake counts in the right entry.
function WsLimit:quota_check(txn, calls, now)
  local quota = self:quota_now()
  if not self.quota then return quota and 'reopen' or nil end
  if now >= self.quota_end then return 'reopen' end
  local before = USED and self.quota_entry and tonumber(USED:lookup(self.quota_entry) or '0') or self.quota_before
  if quota and txn.f:sc_get_gpc(0, self.quota_sc) + before + calls > quota then return 'over' end
end

-- Whether this socket holds part of a message: counted against its address while it does (each
-- holds a whole buffer until the rest comes, rpcstack/held.lua). Past the address's bound, or held
-- longer than a body may take, the socket is closed (msg and chn are needed only while it holds one).
-- With `keep` (whole messages before the held part, let through and counted), a socket past the
-- address's bound is not closed here: true tells the caller to end it after them (end_before).
function WsLimit:unfinished(txn, holds, msg, chn, keep)
  if holds == (self.since ~= nil) then
    if holds and os.time() - self.since > self.unfinished_s then close(txn, msg, chn) end
    return
  end
  local n = held.count(self.src, holds and 1 or -1)
  self.since = holds and os.time() or nil
  if holds and n > self.unfinished_max then
    if keep and keep > 0 then return true end
    close(txn, msg, chn)
  end
end

-- The socket is gone: its subscriptions no longer count against the key, nor a message it held
-- against its address.
function WsLimit:end_analyze(txn)
  self:unfinished(txn, false)
  if self.subs > 0 then
    local left = (OPEN[self.who] or 0) - self.subs
    OPEN[self.who] = left > 0 and left or nil
    self.subs = 0
  end
end


-- Each call copies the input once, and not at all while the unit it waits for cannot be in yet
-- (`need`, counted from the input's start): a message arriving in pieces is not re-read whole
-- for every piece. HAProxy calls this for every read of the client's bytes, so the common
-- message (one frame) costs no table of its own.
function WsLimit:tcp_payload(txn, chn)
  if chn:is_resp() then return self:node_payload(txn, chn) end
  -- A badge socket past its badge's expiry: anything more from the client (its answer to the close
  -- frame included) ends it.
  local now = self.badge and os.time()
  local msg = txn.http_req
  msg.__filter = chn.__filter
  if now and now > self.badge.exp + LEDGER.skew then close(txn, msg, chn) end
  if self.digest and not KEYS:lookup(self.digest) then return self:revoked(txn, msg, chn) end
  if self.ending then return self:after_end(txn, msg, chn) end
  local avail = chn:input()
  if avail < self.need then
    if held.client_gone(txn.req, chn, DATA.buffer) then return self:drop_unfinished(txn, msg, chn, 0, avail) end
    self:unfinished(txn, true, msg, chn)
    return 0
  end
  local data = msg:body(0, avail) or ''
  local pos = 1
  while pos <= #data do
    local stop, frames = ws.unit(data, pos, self.max, FRAMING_ROOM)
    if stop == false then return self:refuse_rest(txn, msg, chn, pos - 1, WHY.TOO_LARGE) end
    if not stop then
      if held.client_gone(txn.req, chn, DATA.buffer) then return self:drop_unfinished(txn, msg, chn, pos - 1, #data) end
      self.need = frames
      if self:unfinished(txn, true, msg, chn, pos - 1) then
        return self:end_before(txn, msg, chn, pos - 1, WHY.TOO_MANY_HELD)
      end
      return pos - 1
    end
    if #frames > 0 then
      local whole
      if #frames == 1 then
        local f = frames[1]
        whole = ws.unmask(data, f[3], f[1], f[2])
      else
        local parts = {}
        for i, f in ipairs(frames) do parts[i] = ws.unmask(data, f[3], f[1], f[2]) end
        whole = table.concat(parts)
      end
      local open = OPEN[self.who] or 0
      local view = self.view
      view.socket, view.key = self.subs, open
      view.filters = FILTERS and self.rules.filter and self.filters_left or nil
      local verdict, calls, text, opened, made, refused = ws.check(whole, self.rules, view, self.mark)
      if verdict then
        return self:refuse_rest(txn, msg, chn, pos - 1, verdict == 'batch' and WHY.BATCH_TOO_LARGE or WHY.UNREADABLE)
      end
      for _ = 1, math.max(1, calls) do txn.f:sc_inc_gpc(0, self.sc) end
      -- What the message bills (usage, quota, allowance): its calls but those the gateway refused
      -- in place (they reach the node only as a method it does not serve); an empty batch, one.
      local b, n = self.badge, calls == 0 and 1 or calls - refused
      local quota = self.quota_sc and self:quota_check(txn, n, now or os.time())
      if quota == 'reopen' then return self:end_before(txn, msg, chn, pos - 1, WHY.QUOTA_PERIOD) end
      -- The badge's allowance is asked last: it spends what it allows.
      local others = RATE_OTHERS and self.sc == 0 and tonumber(RATE_OTHERS:lookup(self.key) or '0') or 0
      local why = txn.f:sc_http_req_rate(self.sc) + txn.f:sc_gpc_rate(0, self.sc) + others > self.rate and WHY.RATE_PAST
        or quota == 'over' and WHY.QUOTA_PAST
        or b and LEDGER:spend(b.jti, b.exp, b.alw, n, now) and WHY.ALLOWANCE_PAST
      if why then
        -- Usage (gateway/usage.ts): refused for the rate, the quota or the badge's allowance.
        if self.usage then txn.f:sc_inc_gpc(2, self.usage) end
        return self:end_before(txn, msg, chn, pos - 1, why)
      end
      -- Only what goes on counts against the quota, as in usage.
      for _ = 1, self.quota and n or 0 do txn.f:sc_inc_gpc(0, self.quota_sc) end
      -- Only what goes on counts, in usage too: a socket closed above forwards nothing. A refused
      -- call is an error, as over HTTP.
      for _ = 1, self.usage and n or 0 do txn.f:sc_inc_gpc(0, self.usage) end
      for _ = 1, self.usage and refused or 0 do txn.f:sc_inc_gpc(1, self.usage) end
      if made and made > 0 and FILTERS then FILTERS:take(self.key, made, self.now) end
      if opened > 0 then self.subs, OPEN[self.who] = self.subs + opened, open + opened end
      if text then
        -- msg:set counts from the input's start, as pos - 1 does; the rest of data moves along.
        local new = text ~= '' and ws.frame(text, frames[1][3]) or ''
        if new == '' then msg:remove(pos - 1, stop - pos) else msg:set(new, pos - 1, stop - pos) end
        data = data:sub(1, pos - 1) .. new .. data:sub(stop)
        stop = pos + #new
      end
    end
    pos = stop
  end
  self.need = 0
  self:unfinished(txn, false, msg, chn)
  return pos - 1
end

ending.install(WsLimit, KEYS, LEDGER and LEDGER.skew, MARK)

-- filter lua.ws_limit <chain> <max message bytes> <calls + requests per 10 s> <stick counter>
--   <subscriptions per socket> <subscriptions per key> <unfinished messages per address>
--   <seconds a message may take> <usage stick counter, or - where no key is tracked>
--   <quota stick counter, or ->
core.register_filter('ws_limit', WsLimit, function(f, args)
  f.rules = RULES[args[1]]
  f.max, f.rate, f.sc = tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
  f.socket_max, f.key_max = tonumber(args[5]), tonumber(args[6])
  f.unfinished_max, f.unfinished_s = tonumber(args[7]), tonumber(args[8])
  f.usage, f.quota_sc = tonumber(args[9]), tonumber(args[10])
  return f
end)
