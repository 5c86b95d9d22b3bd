-- The gateway's answers to JSON-RPC calls its method policy refuses (see gateway/batch.ts),
-- loaded by HAProxy's lua-load. The texts come from rpcstack/answers.lua.
-- - action rpc_refusal (http-req, a single refused call): sets txn.rpc_refusal, the error answer
--   with the call's id and method as sent, which the frontend returns with 403; empty for a
--   notification, which gets the 403 with no body.
-- - service rpc_batch (a batch holding refused calls, after the rate and allowance checks): answers
--   the refused calls itself and relays the others to the chain's node as a smaller batch with the
--   httpclient, through HAProxy's own listener for it (fetch.dst), which hands each chain's to the
--   backend that relays its calls: no node URL is known here. The answers are joined into one array.
-- The chains' lists and the listener come from the stack's generated data (gateway_data.lua).
local DATA = require('gateway_data')
local POLICY, BATCH = DATA.policy, DATA.batch
local answers = require 'rpcstack.answers'
local policy = require 'rpcstack.policy'
local json = require 'rpcstack.json'
local sign = require('rpcstack.internal').signer(core.get_var)

core.register_action('rpc_refusal', { 'http-req' }, function(txn)
  local body = txn.f:req_body() or ''
  local calls = policy.read(body)
  -- A body only json_query could read (the native path) names its method there.
  local method = calls and calls[1] and policy.denied(calls[1], POLICY[txn:get_var('txn.rpc')])
    or txn:get_var('txn.rpc_method') or ''
  local ok, id = pcall(answers.id_of, body, json.skip(body, 1))
  -- A notification (an object with no id) is answered with nothing: the rule returns the 403 alone.
  local notification = ok and not id and body:find('^%s*{')
  txn:set_var('txn.rpc_refusal', notification and '' or answers.refusal(ok and id or nil, method))
end, 0)

local function failed(status)
  local e = BATCH.errors[tostring(status)] or BATCH.errors['502']
  return e.code, e.message
end

-- The allowed calls, relayed; status 0 when the node could not be reached.
local function relay(chain, spec, sub, host)
  local headers = { ['content-type'] = { 'application/json' } }
  if host then headers.host = { host } end
  local ok, res = pcall(function()
    local req = { url = BATCH.url .. chain .. (spec or ''), dst = BATCH.dst, body = sub, headers = sign(headers),
                  timeout = BATCH.timeout }
    return core.httpclient():post(req)
  end)
  if not ok or not res or not res.status then return 0, nil end
  return res.status, res.body
end

core.register_service('rpc_batch', 'http', function(applet)
  local chain = applet:get_var('txn.rpc')
  local body = applet:receive() or ''
  local p = answers.plan(body, POLICY[chain])
  local status, text
  if not p then
    status, text = 500, BATCH.internal
  elseif p.sub then
    local host = applet.headers.host and applet.headers.host[0]
    local got, reply = relay(chain, applet:get_var(BATCH.spec_var), p.sub, host)
    status, text = answers.join(p, got, reply, failed)
  else
    status, text = answers.join(p, 200, '', failed)
  end
  applet:set_status(status)
  applet:add_header('content-type', 'application/json')
  applet:add_header('content-length', tostring(#text))
  applet:start_response()
  applet:send(text)
end)
