-- The Lua half of the method policy (see gateway/policy.ts), loaded by HAProxy's lua-load. The
-- action rpc_policy reads the whole JSON-RPC body (rpcstack/policy.lua decides) and sets:
--   txn.rpc_verdict  "denied" (a single call) | "split" (a batch holding denied calls: answered
--                    by refusals.lua) | "batch" (too many calls) | "parse" (not JSON) | "invalid"
--                    (JSON, but no call it can check)
--   txn.rpc_read     true for an allowed body whose every call is a known read, on a chain
--                    with several nodes (its lists hold the reads): it may go to a second node
--   txn.rpc_calls    a batch's number of calls (the rate counts them)
--   txn.rpc_relayed  of a batch holding refused calls, how many go on to a node, and
--   txn.rpc_refused  how many the gateway answers itself (usage, quotas and a badge's allowance
--                    count only those relayed: gateway/usage.ts requestCalls)
-- Each chain's lists come from the stack's generated data (gateway_data.lua).
local POLICY = require('gateway_data').policy
local decide = require('rpcstack.policy').decide

core.register_action('rpc_policy', { 'http-req' }, function(txn, chain, max_batch)
  local body = txn.f:req_body() or ''
  local verdict, calls, _, send, relayed = decide(body, POLICY[chain], tonumber(max_batch))
  if verdict == 'invalid' or verdict == 'parse' or verdict == 'batch' then
    txn:set_var('txn.rpc_verdict', verdict)
    return
  end
  -- A batch counts as its number of calls against the rate it is under: the key's (sc0) on a
  -- gateway path, the address's (sc1) on a public hostname, where no key is named.
  local sc = txn:get_var('txn.keyname') and 0 or 1
  for _ = 2, calls do txn.f:sc_inc_gpc(0, sc) end
  if calls > 1 then txn:set_var('txn.rpc_calls', calls) end
  if verdict == 'denied' then
    -- A batch is answered as one (refusals.lua): its refused calls in place, its others relayed.
    local batch = body:find('^%s*%[') ~= nil
    txn:set_var('txn.rpc_verdict', batch and 'split' or verdict)
    if batch then
      txn:set_var('txn.rpc_relayed', relayed)
      txn:set_var('txn.rpc_refused', calls - relayed)
    end
  elseif send == false then
    txn:set_var('txn.rpc_read', true)
  end
end, 2)
