-- Badges (gateway/badges.ts): the action badge_spend counts a request's calls against the
-- allowance of the badge it carries, once HAProxy's own rules have verified the badge (signature,
-- expiry, project, chain) and put its id, expiry and allowance in txn.badge_jti, txn.badge_exp and
-- txn.badge_alw. A request's calls are in txn.req_calls (gateway/usage.ts requestCalls: a batch's
-- number, else one); a WebSocket handshake, which has none, spends one. Sets txn.badge_verdict
-- when the request must be refused:
--   "spent" (429: the allowance is used up), "full" (503: the gateway holds as many badges as it
--   may), "expired" (401).
-- The action badge_seen spares a badge the gateway accepted before its checks (an ECDSA
-- verification and a JSON read per claim, most of what a badge costs): when the token's digest
-- (txn.badge_digest, SHA-256 of the whole token) is one badge_spend remembered and unexpired, it
-- sets txn.badge_sig, txn.badge_exp, txn.badge_project, txn.badge_jti, txn.badge_alw and, for a
-- chain the badge was accepted for before, txn.badge_scope, as HAProxy's own checks would.
-- Loaded by HAProxy's lua-load; the ledger is shared with the WebSocket filter (limits.lua).
local DATA = require('gateway_data').badges
local ledger = require('rpcstack.badge_ledger').shared(DATA.max_held, DATA.skew, DATA.projects)

core.register_action('badge_spend', { 'http-req' }, function(txn)
  local jti = txn:get_var('txn.badge_jti')
  local exp, alw = tonumber(txn:get_var('txn.badge_exp')), tonumber(txn:get_var('txn.badge_alw'))
  if not jti or not exp or not alw then
    txn:set_var('txn.badge_verdict', 'spent')
    return
  end
  -- No txn.req_calls: a WebSocket handshake, which is no call (its messages' calls count in ws_limit).
  local calls = tonumber(txn:get_var('txn.req_calls')) or 0
  local now = os.time()
  local verdict = ledger:spend(jti, exp, alw, calls, now, txn:get_var('txn.badge_project'))
  if verdict then txn:set_var('txn.badge_verdict', verdict) end
  local digest = txn:get_var('txn.badge_digest')
  if digest and not verdict then
    local claims = { exp = exp, sub = txn:get_var('txn.badge_project'), jti = jti, alw = alw }
    ledger:remember(digest, claims, txn:get_var('txn.chain'), now)
  end
end, 0)

-- A request no route took, or HAProxy could not hand to a node, gives back what badge_spend
-- counted (the same calls, negated).
core.register_action('badge_refund', { 'http-req', 'http-after-res' }, function(txn)
  local jti = txn:get_var('txn.badge_jti')
  local exp, alw = tonumber(txn:get_var('txn.badge_exp')), tonumber(txn:get_var('txn.badge_alw'))
  if not jti or not exp or not alw then return end
  ledger:spend(jti, exp, alw, -(tonumber(txn:get_var('txn.req_calls')) or 0), os.time())
end, 0)

core.register_action('badge_seen', { 'http-req' }, function(txn)
  local digest = txn:get_var('txn.badge_digest')
  local c = digest and ledger:known(digest, os.time())
  if not c then return end
  txn:set_var('txn.badge_sig', 1)
  txn:set_var('txn.badge_exp', c.exp)
  txn:set_var('txn.badge_project', c.sub)
  txn:set_var('txn.badge_jti', c.jti)
  txn:set_var('txn.badge_alw', c.alw)
  if c.scope[txn:get_var('txn.chain')] then txn:set_var('txn.badge_scope', 1) end
end, 0)
