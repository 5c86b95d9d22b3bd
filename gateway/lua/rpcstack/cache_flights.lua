-- The response cache's misses in flight: the one fetch per key ({ key, epoch, waiters, and once
-- done: status, body, pre, post }); identical misses wait for it (in the lookup action, where a
-- call holds its request's buffer only). At most `max` fetches run at once, holding at most
-- `bytes` of answers as estimated per method (the size of its last answers, halving back from the
-- largest); a miss that finds no place goes to the node as without the cache (stats.bypassed), so
-- memory in flight stays bounded however many clients miss at once. Also the hand-overs from the
-- lookup action to the service, which may hold such a place.
-- The reads at the head that identical calls share (rpcstack/cache_merge.lua) fly here too.
-- No HAProxy here: the clock and the waiting come in o, called only while a call waits.
--
--   new(o) -> flights, o: { max, bytes, max_object (the estimate of a method not seen yet),
--       reply_max (larger answers go to the service), timeout (the body of the 504 after
--       WAIT_LIMIT_MS), now_ms(), wait(f, ms) (until wake(f) or ms pass) and wake(f) (f landed), or
--       sleep(ms) instead, polled }
--   flights.miss(txn, st, epoch, x, s, id, mk, owner)  call x (id as sent) missed: answered here
--       (txn:done) or a hand-over with the answer of an identical call in flight, else a hand-over
--       that leads a new flight if a place is free; nil when answered here or left to the node.
--       x: { key, rule, at } of the cache, or { key, class, floor } of a merge (floor: the head
--       the gateway knew as the call arrived; an answer showing an older one is not taken)
--   flights.learn(class, size)      the size of an answer of class (p.class of a hand-over)
--   flights.land(p, status, body, pre, post, head)  the leader's answer (head: the head it
--                                   shows, if any): its waiters take it, its place is given back
--   flights.forget(chain)           no call joins a flight of chain begun before (its node changed)
--   flights.hand(token, now) -> tok, flights.take(tok) -> token   the hand-overs (now in seconds)
--   flights.sweep(now)              drops hand-overs older than 10 s, and the places they hold
--   flights.running()               fetches running now
--   flights.joinable(key, epoch)    whether a call of key would join a flight now
local WAIT_MS, WAIT_LIMIT_MS, LEADER_LOST_MS = 5, 70000, 1000
-- Woken when the flight lands; this often otherwise, to see a lost leader.
local WAKE_MS = 100

local COALESCED_HEADERS = { ['content-type'] = { 'application/json' }, ['x-cache'] = { 'COALESCED' } }
local JSON_HEADERS = { ['content-type'] = { 'application/json' } }

-- Answers of one method (and its boolean arguments, such as full transactions) are alike in size.
local function class_of(key, rule)
  local parts, out = {}, {}
  for x in key:gmatch('[^|]+') do parts[#parts + 1] = x end
  out[1], out[2] = parts[1], parts[2]
  for i, kind in ipairs(rule.args) do
    if kind == 'bool' then out[#out + 1] = parts[2 + i] end
  end
  return table.concat(out, '|')
end

local function new(o)
  local wait = o.wait or function(_, ms) o.sleep(ms) end
  local FLIGHTS, EST, PENDING = {}, {}, {}
  local RUNNING, RESERVED, SEQ, LAST_COLLECT = 0, 0, 0, 0

  -- A leader's place among the fetches, given back by release(), by the sweep of hand-overs whose
  -- service never ran, or by the collector once the coroutine holding it is dropped (its client
  -- went away: HAProxy drops the coroutine unfinished).
  local function release(slot)
    if slot.held then
      slot.held = false
      RUNNING, RESERVED = RUNNING - 1, RESERVED - slot.bytes
    end
    local f = slot.flight
    if not f.done then f.gone = true end
    if FLIGHTS[f.key] == f then FLIGHTS[f.key] = nil end
  end
  local SLOT = { __gc = release }

  -- Whoever has waited over LEADER_LOST_MS for an identical call's fetch runs the collector, at
  -- most once in that time: a dropped leader's place and flight come back then.
  local function collect_lost(since)
    local now = o.now_ms()
    if now - since > LEADER_LOST_MS and now - LAST_COLLECT > LEADER_LOST_MS then
      LAST_COLLECT = now
      collectgarbage('collect')
    end
  end

  -- A place among the fetches for flight f, if one is free now.
  local function place(f, class)
    local est = EST[class] or o.max_object
    if RUNNING > 0 and (RUNNING >= o.max or RESERVED + est > o.bytes) then return nil end
    RUNNING, RESERVED = RUNNING + 1, RESERVED + est
    return setmetatable({ flight = f, held = true, bytes = est }, SLOT)
  end

  -- Waits for the flight of an identical call: the flight once done, nil when its leader is gone
  -- (this call leads then), 'timeout' after WAIT_LIMIT_MS.
  local function await(f)
    f.waiters = f.waiters + 1
    local since = o.now_ms()
    while not f.done and not f.gone do
      if o.now_ms() - since > WAIT_LIMIT_MS then return 'timeout' end
      collect_lost(since)
      wait(f, o.wait and WAKE_MS or WAIT_MS)
    end
    return f.done and f or nil
  end

  local function miss(txn, st, epoch, x, s, id, mk, owner)
    while true do
      local f = FLIGHTS[x.key]
      if not f or f.epoch ~= epoch or f.gone then break end
      local done = await(f)
      if done == 'timeout' then
        txn:done({ status = 504, headers = JSON_HEADERS, body = o.timeout })
        return nil
      end
      -- An answer older than the head known as the call arrived (another node's, behind): the
      -- call goes to the node itself.
      if done and x.floor and done.head and done.head < x.floor then
        st.bypassed = st.bypassed + 1
        return nil
      end
      -- An answer that could not be cut around its id is no one else's to take.
      if done and not done.pre and done.status == 200 then
        st.bypassed = st.bypassed + 1
        return nil
      end
      if done then
        st.coalesced = st.coalesced + 1
        if done.pre and #done.pre + #id + #done.post <= o.reply_max then
          txn:done({ status = done.status, headers = COALESCED_HEADERS, body = done.pre .. id .. done.post })
          return nil
        end
        return { coalesced = done, id = id }
      end
    end
    local f = { key = x.key, epoch = epoch, waiters = 0 }
    local class = x.class or class_of(x.key, x.rule)
    local slot = place(f, class)
    if not slot then
      st.bypassed = st.bypassed + 1
      return nil
    end
    FLIGHTS[x.key] = f
    return { key = x.key, rule = x.rule, block = x.at, body = s, mk = mk, id = id, owner = owner, epoch = epoch,
             class = class, flight = f, slot = slot }
  end

  local function land(p, status, body, pre, post, head)
    local f = p.flight
    f.status, f.body, f.pre, f.post, f.head, f.done = status, not pre and body or nil, pre, post, head, true
    release(p.slot)
    if o.wake then o.wake(f) end
  end

  local function forget(chain)
    for key, f in pairs(FLIGHTS) do
      if key:sub(1, #chain + 1) == chain .. '|' then f.epoch = -1 end
    end
  end

  local function hand(token, now)
    SEQ = SEQ + 1
    token.at = now
    PENDING[tostring(SEQ)] = token
    return tostring(SEQ)
  end

  local function take(tok)
    local p = tok and PENDING[tok]
    if p then PENDING[tok] = nil end
    return p
  end

  -- The service runs right after the action that hands over: one that never ran lost its client.
  local function sweep(now)
    for k, p in pairs(PENDING) do
      if now - p.at > 10 then
        if p.slot then release(p.slot) end
        PENDING[k] = nil
      end
    end
  end

  return {
    miss = miss, land = land, forget = forget, hand = hand, take = take, sweep = sweep,
    learn = function(class, size) EST[class] = math.max(size, (EST[class] or o.max_object) // 2) end,
    running = function() return RUNNING end,
    joinable = function(key, epoch)
      local f = FLIGHTS[key]
      return f ~= nil and f.epoch == epoch and not f.gone
    end,
  }
end

return { new = new, class_of = class_of }
