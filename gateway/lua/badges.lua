-- Badges (gateway/badges.ts): the action badge_spend counts a request's calls against the
-- allowance of the badge it carries, once HAProxy's own rules have verified the badge (signature,
-- expiry, project, chain) and put its id, expiry and allowance in txn.badge_jti, txn.badge_exp and
-- txn.badge_alw. The policy's Lua action leaves a batch's number of calls in txn.rpc_calls; any
-- other request is one call. Sets txn.badge_verdict when the request must be refused:
--   "spent" (429: the allowance is used up), "full" (503: the gateway holds as many badges as it
--   may), "expired" (401).
-- The action badge_seen spares the signature check (an ECDSA verification, most of what a badge
-- costs) for a badge already verified: txn.badge_sig is set to 1 when the token's digest
-- (txn.badge_digest, SHA-256 of the whole token) is one badge_spend remembered, and unexpired.
-- Loaded by HAProxy's lua-load; the ledger is shared with the WebSocket filter (limits.lua).
local DATA = require('gateway_data').badges
local ledger = require('rpcstack.badge_ledger').shared(DATA.max_held, DATA.skew)

core.register_action('badge_spend', { 'http-req' }, function(txn)
  local jti = txn:get_var('txn.badge_jti')
  local exp, alw = tonumber(txn:get_var('txn.badge_exp')), tonumber(txn:get_var('txn.badge_alw'))
  if not jti or not exp or not alw then
    txn:set_var('txn.badge_verdict', 'spent')
    return
  end
  local calls = tonumber(txn:get_var('txn.rpc_calls')) or 1
  local now = os.time()
  local verdict = ledger:spend(jti, exp, alw, calls, now)
  if verdict then txn:set_var('txn.badge_verdict', verdict) end
  local digest = txn:get_var('txn.badge_digest')
  if digest then ledger:remember(digest, exp, now) end
end, 0)

core.register_action('badge_seen', { 'http-req' }, function(txn)
  local digest = txn:get_var('txn.badge_digest')
  if digest and ledger:known(digest, os.time()) then txn:set_var('txn.badge_sig', 1) end
end, 0)
