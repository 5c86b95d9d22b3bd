-- Filters each key has created on the nodes lately, for the whole gateway: HAProxy's lua-load
-- runs one Lua state for every thread, so the HTTP action (filters.lua) and the ws_limit filter
-- (limits.lua) count into the same table. A key may create `max` filters in any `window`
-- seconds, counted as HAProxy counts its own rates: this window's count, plus the last window's
-- weighted by how much of it still overlaps (a sliding window within a few percent).
--
--   new(max, window) -> budget
--   budget:left(who, now) -> n    creations `who` may still make at `now` (Unix seconds)
--   budget:take(who, n, now)      counts n creations
-- One entry per key; a key idle for two windows starts again from nothing.
local Budget = {}
Budget.__index = Budget

function Budget.new(max, window)
  return setmetatable({ max = max, window = window, keys = {} }, Budget)
end

-- The key's entry, moved on to the window `now` falls in.
function Budget:entry(who, now)
  local start = now - now % self.window
  local e = self.keys[who]
  if not e then
    e = { start = start, cur = 0, prev = 0 }
    self.keys[who] = e
  elseif e.start ~= start then
    e.prev = (start - e.start == self.window) and e.cur or 0
    e.cur, e.start = 0, start
  end
  return e, start
end

function Budget:left(who, now)
  local e, start = self:entry(who, now)
  local used = e.cur + e.prev * (1 - (now - start) / self.window)
  return math.max(0, math.floor(self.max - used))
end

function Budget:take(who, n, now)
  local e = self:entry(who, now)
  e.cur = e.cur + n
end

local shared
-- The gateway's one budget (created by the first program that asks, with its bound).
function Budget.shared(max, window)
  shared = shared or Budget.new(max, window)
  return shared
end

return Budget
