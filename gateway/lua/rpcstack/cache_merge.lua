-- Merging identical reads at the head: which calls may share one fetch to the node, and the heads
-- the gateway has seen, which decide until when a fetch in flight may still be shared.
--
-- The rule: a call joins an identical call's fetch only if the gateway has seen no newer head of
-- the chain since that fetch was sent. The node answers a fetch after it was sent, so at a head at
-- least the one the gateway knew then, which is the newest it knew when the caller arrived: no
-- caller is answered older than a head it could have been shown here. The heads seen: the answers
-- to head calls and latest blocks the merge fetched (see), and a count HAProxy keeps of such
-- answers that went to the node another way (a batch, a call with no place among the fetches):
-- any change of it counts as a newer head.
--
-- A chain as mergeable sees it: cache_keys's view with merge = { method -> how its answer shows
-- the head (head_of's names) or true when it shows none }.
--
--   mergeable(c, s) -> method, how, a, b   a single call identical calls may share (c.merge's
--       methods, never at a pending tag), how its answer shows the head and its id's span
--   head_of(how, body) -> number   the head such an answer shows; nil when none
--   heads() -> { see(chain, n), seq(chain), head(chain) }   the newest head seen per chain (nil:
--       none yet); seq changes with it
--   lanes() -> { lead(key), landed(key, joined) }   whether a read with no fetch to join leads one
--       (else it goes to the node alone), and what its last fetch found
local keys = require 'rpcstack.cache_keys'
local json = require 'rpcstack.json'
local skip = json.skip
local byte, find, sub = string.byte, string.find, string.sub

-- Tags whose answer follows the node's pool of transactions, not its head: never shared.
local UNSETTLED = { '"pending"', '"pre_confirmed"' }

local single, envelope = keys.single, keys.envelope

local function mergeable(c, s)
  if not c.merge then return nil end
  local first = skip(s, 1)
  if byte(s, first) ~= 123 then return nil end
  local m = single(s, first)
  local method = envelope(c, s, m)
  local head = method and c.merge[method]
  if not head then return nil end
  if m.params then
    local p = sub(s, m.params.a, m.params.b)
    for _, tag in ipairs(UNSETTLED) do
      if find(p, tag, 1, true) then return nil end
    end
  end
  return method, head, m.id.a, m.id.b
end

-- The head an answer to a head call shows (how: the chain's merge table's value for its method),
-- nil when it shows none.
local function hex(h) return h and #h <= 13 and tonumber(h, 16) or nil end
local function dec(d) return d and #d <= 15 and tonumber(d) or nil end
local HEAD_OF = {
  qty = function(body) return hex(body:match('"result"%s*:%s*"0x(%x+)"')) end,
  int = function(body) return dec(body:match('"result"%s*:%s*(%d+)[,}%s]')) end,
  number = function(body) return hex(body:match('"result"%s*:%s*{.-"number"%s*:%s*"0x(%x+)"')) end,
  block_number = function(body) return dec(body:match('"result"%s*:%s*{.-"block_number"%s*:%s*(%d+)')) end,
}
local function head_of(how, body)
  local f = HEAD_OF[how]
  return f and f(body) or nil
end

local function heads()
  local HEAD, SEQ = {}, {}
  return {
    see = function(chain, n)
      if n and n > (HEAD[chain] or -1) then
        HEAD[chain], SEQ[chain] = n, (SEQ[chain] or 0) + 1
      end
    end,
    seq = function(chain) return SEQ[chain] or 0 end,
    head = function(chain) return HEAD[chain] end,
  }
end

-- Which reads lead a fetch when none is in flight to join: a fetch costs more than a relay, so only
-- a read an identical call joined last time (a crowd asks it), the first of each, and one in
-- PROBE of the others, which finds out whether a crowd came. Bounded: past MAX_KEYS reads known,
-- it starts over.
local PROBE, MAX_KEYS = 8, 4096
local function lanes()
  -- Per read: true while an identical call joined its last fetch, else its calls counted.
  local SEEN, n = {}, 0
  local function set(key, v)
    if SEEN[key] == nil then
      n = n + 1
      if n > MAX_KEYS then SEEN, n = {}, 1 end
    end
    SEEN[key] = v
  end
  return {
    lead = function(key)
      local s = SEEN[key]
      if s == true then return true end
      local c = (s or 0) + 1
      set(key, c)
      return c % PROBE == 1
    end,
    landed = function(key, joined)
      if joined then set(key, true) elseif SEEN[key] == true then SEEN[key] = 1 end
    end,
  }
end

return { mergeable = mergeable, head_of = head_of, heads = heads, lanes = lanes }
