-- Filters per key (see gateway/filters.ts), loaded by HAProxy's lua-load. The action rpc_filters
-- runs for a JSON-RPC body that may create a filter: it reads the body as the policy reads it
-- (rpcstack/policy.lua), counts the calls whose method creates one (each chain's pattern, from
-- the stack's generated data, gateway_data.lua), and counts them against the key's budget
-- (rpcstack/filter_budget.lua, shared with the WebSocket filter). When they do not all fit, none
-- is counted and txn.rpc_verdict is set to "filters": the request is refused whole.
local DATA = require('gateway_data').filters
local read = require('rpcstack.policy').read
local budget = require('rpcstack.filter_budget').shared(DATA.max, DATA.window)

core.register_action('rpc_filters', { 'http-req' }, function(txn, chain)
  local pattern = DATA.chains[chain]
  local calls = pattern and read(txn.f:req_body() or '')
  if not calls then return end
  local n = 0
  for _, methods in ipairs(calls) do
    for _, m in ipairs(methods) do
      if m:lower():find(pattern) then
        n = n + 1
        break
      end
    end
  end
  if n == 0 then return end
  -- A key's filters, however they were asked for (a badge's count against its project).
  local who = txn:get_var('txn.keyname') or ('address ' .. tostring(txn.f:src()))
  local now = os.time()
  if budget:left(who, now) < n then
    txn:set_var('txn.rpc_verdict', 'filters')
  else
    budget:take(who, n, now)
  end
end, 1)
