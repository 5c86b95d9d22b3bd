-- What each badge has spent of its allowance, for the whole gateway: HAProxy's lua-load runs one
-- Lua state for every thread, so the badges action (HTTP) and the ws_limit filter (WebSocket
-- messages) count into the same table. A badge is a signed token the gateway has already
-- verified; it carries its id (jti), its expiry (exp, Unix seconds) and its allowance (calls).
--
-- Entries are kept in buckets by the minute their badge expires: once a minute has passed (and
-- the clock skew the gateway grants), the whole bucket goes, so cleaning up never walks entries
-- one by one. At most `max` badges are held at once; a badge not yet held is refused beyond it.
--
--   new(max, skew) -> ledger
--   ledger:remember(digest, claims, chain, now)   a badge HAProxy verified and accepted for chain
--       (digest: SHA-256 of the whole token; claims: { exp, sub, jti, alw }), so that the next
--       request with the same bytes need neither verify its signature nor read its claims again
--   ledger:known(digest, now) -> claims   that badge's claims (and .scope[chain] for each chain
--       it was accepted for), or nil when it is not held or has expired
--   ledger:spend(jti, exp, allowance, calls, now, project) -> verdict, spent
--       verdict  nil (within the allowance), "spent" (these calls would pass the allowance, or,
--                for none (a WebSocket handshake), nothing is left), "full" (too many badges
--                held, or the project holds its share of them: a badge not yet held), "expired"
--       spent    the badge's calls so far, these included when allowed: a refusal spends nothing,
--                as a quota's does (negative calls give back what a request no route took spent)
local Ledger = {}
Ledger.__index = Ledger

-- `projects`: how many projects share the `max` badges held; each may hold its equal share, so one
-- project's pages (or a script minting for it) cannot fill the room the others' need.
function Ledger.new(max, skew, projects)
  return setmetatable({
    buckets = {}, held = 0, max = max, skew = skew, swept = 0,
    share = math.max(1, max // math.max(1, projects or 1)), by = {},
    seen = {}, seen_claims = {}, seen_held = 0,
  }, Ledger)
end

-- Drops every bucket whose badges have all expired (past the skew too); at most once a second.
function Ledger:sweep(now)
  if now == self.swept then return end
  self.swept = now
  for minute, b in pairs(self.buckets) do
    if (minute + 1) * 60 + self.skew <= now then
      self.held = self.held - b.n
      for project, n in pairs(b.by) do self.by[project] = self.by[project] - n end
      self.buckets[minute] = nil
    end
  end
  for minute, digests in pairs(self.seen) do
    if (minute + 1) * 60 + self.skew <= now then
      for _, d in ipairs(digests) do self.seen_claims[d] = nil end
      self.seen_held = self.seen_held - #digests
      self.seen[minute] = nil
    end
  end
end

-- Verified signatures, by the minute their badge expires (swept like the counts). A digest is
-- found only for the very token that was verified: any other bytes are another digest.
function Ledger:remember(digest, claims, chain, now)
  self:sweep(now)
  local held = self.seen_claims[digest]
  if held then
    held.scope[chain] = true
    return
  end
  if self.seen_held >= self.max then return end
  local minute = claims.exp // 60
  local digests = self.seen[minute]
  if not digests then
    digests = {}
    self.seen[minute] = digests
  end
  digests[#digests + 1] = digest
  claims.scope = { [chain] = true }
  self.seen_claims[digest] = claims
  self.seen_held = self.seen_held + 1
end

function Ledger:known(digest, now)
  self:sweep(now)
  local claims = self.seen_claims[digest]
  if claims and claims.exp + self.skew >= now then return claims end
end

function Ledger:spend(jti, exp, allowance, calls, now, project)
  self:sweep(now)
  if exp + self.skew < now then return 'expired', 0 end
  local minute = exp // 60
  local b = self.buckets[minute]
  if not b then
    b = { n = 0, used = {}, by = {} }
    self.buckets[minute] = b
  end
  local used = b.used[jti]
  if not used then
    project = project or '-'
    if self.held >= self.max or (self.by[project] or 0) >= self.share then return 'full', 0 end
    b.n, self.held, used = b.n + 1, self.held + 1, 0
    b.by[project], self.by[project] = (b.by[project] or 0) + 1, (self.by[project] or 0) + 1
  end
  -- A refusal spends nothing; a WebSocket handshake (no calls) is refused once nothing is left.
  if used + calls > allowance or calls == 0 and used >= allowance then
    b.used[jti] = used
    return 'spent', used
  end
  used = used + calls
  b.used[jti] = used
  return nil, used
end

local shared
-- The gateway's one ledger (created by the first program that asks, with its bounds).
function Ledger.shared(max, skew, projects)
  shared = shared or Ledger.new(max, skew, projects)
  return shared
end

return Ledger
