-- The method policy's decision (gateway/lua/rpcstack/policy.lua).
local decide = require('rpcstack.policy').decide

local EVM = { deny = { 'debug_', 'admin_', 'eth_sign' }, allow = { 'debug_tracetransaction' } }
local call = function(method) return '{"jsonrpc":"2.0","method":"' .. method .. '","params":[],"id":1}' end

describe('decide', function()
  it('allows a call whose method is not denied, and counts it as one', function()
    assert.same({ nil, 1 }, { decide(call('eth_blockNumber'), EVM, 10) })
  end)

  it('denies a listed method or family, in any case, and names it as sent', function()
    assert.same({ 'denied', 1, 'Debug_SetHead-X', nil, 0 }, { decide(call('Debug_SetHead-X'), EVM, 10) })
    assert.same({ 'denied', 1, 'ETH_SIGN', nil, 0 }, { decide(call('ETH_SIGN'), EVM, 10) })
    assert.same({ nil, 1 }, { decide(call('eth_signTransaction'), EVM, 10) })
  end)

  it('lets an allow entry open one method of a denied family', function()
    assert.same({ nil, 1 }, { decide(call('debug_traceTransaction'), EVM, 10) })
    assert.equal('denied', (decide(call('debug_traceCall'), EVM, 10)))
  end)

  it('reads the method as the node will: escapes decoded, every "method" key in any case', function()
    assert.equal('denied', (decide([[{"method":"debug\u005fsetHead","id":1}]], EVM, 10)))
    assert.equal('denied', (decide('{"method":"eth_call","METHOD":"admin_peers","id":1}', EVM, 10)))
    assert.equal('denied', (decide('{"method":"admin_peers","method":"eth_call","id":1}', EVM, 10)))
    assert.equal('denied', (decide([[{"m\u0065thod":"admin_peers","id":1}]], EVM, 10)))
  end)

  it('does not take a "method" inside params for the call\'s own', function()
    assert.same({ nil, 1 }, { decide('{"method":"eth_call","params":[{"method":"admin_peers"}],"id":1}', EVM, 10) })
  end)

  it('checks every call of a batch and counts them; a batch over the limit is refused whole', function()
    local batch = '[' .. call('eth_blockNumber') .. ',' .. call('eth_chainId') .. ']'
    assert.same({ nil, 2 }, { decide(batch, EVM, 2) })
    assert.equal('batch', (decide(batch, EVM, 1)))
    local mixed = '[' .. call('eth_chainId') .. ',1,' .. call('admin_peers') .. ']'
    assert.same({ 'denied', 3, 'admin_peers', nil, 1 }, { decide(mixed, EVM, 5) })
  end)

  it('says how many calls of a batch holding refused ones are relayed: neither denied nor no call', function()
    local items = { call('eth_chainId'), call('admin_peers'), call('eth_blockNumber'), '7', call('debug_setHead') }
    assert.same({ 'denied', 5, 'admin_peers', nil, 2 }, { decide('[' .. table.concat(items, ',') .. ']', EVM, 10) })
    local none = '[' .. call('admin_peers') .. ',' .. call('debug_setHead') .. ']'
    assert.same({ 'denied', 2, 'admin_peers', nil, 0 }, { decide(none, EVM, 10) })
  end)

  it('refuses what it cannot read whole: broken JSON and trailing text as a parse error, a bare value '
    .. 'or nesting too deep to check as invalid', function()
    for _, body in ipairs({ '', '{', '{"method":"eth_call"', call('eth_call') .. ' x',
      '{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]' }) do
      assert.equal('parse', (decide(body, EVM, 10)), body)
    end
    for _, body in ipairs({ '"eth_call"', 'null', '5',
      '{"method":"a","params":' .. string.rep('[', 70) .. string.rep(']', 70) .. '}' }) do
      assert.equal('invalid', (decide(body, EVM, 10)), body)
    end
  end)

  it('with the reads of a chain with several nodes, says whether an allowed body holds anything else', function()
    local reads = { eth_getbalance = true, eth_blocknumber = true, eth_chainid = true }
    local lists = { deny = EVM.deny, allow = EVM.allow, reads = reads }
    assert.same({ nil, 1, nil, false }, { decide(call('eth_getBalance'), lists, 10) })
    assert.same({ nil, 1, nil, false }, { decide(call('ETH_GetBalance'), lists, 10) })
    assert.same({ nil, 1, nil, true }, { decide(call('ETH_SendRawTransaction'), lists, 10) })
    -- Not known to be a read is enough: sends under names no list of sends would hold.
    for _, m in ipairs({ 'eea_sendRawTransaction', 'priv_distributeRawTransaction', 'mev_sendBundle', 'x_unknown' }) do
      assert.same({ nil, 1, nil, true }, { decide(call(m), lists, 10) }, m)
    end
    local batch = '[' .. call('eth_blockNumber') .. ',' .. call('mev_sendBundle') .. ']'
    assert.same({ nil, 2, nil, true }, { decide(batch, lists, 10) })
    local reads_only = '[' .. call('eth_blockNumber') .. ',' .. call('eth_chainId') .. ']'
    assert.same({ nil, 2, nil, false }, { decide(reads_only, lists, 10) })
    -- A call without a method string is nothing the gateway can vouch for as a read.
    assert.same({ nil, 2, nil, true }, { decide('[' .. call('eth_chainId') .. ',{"id":2}]', lists, 10) })
    assert.same({ 'denied', 1, 'admin_peers', nil, 0 }, { decide(call('admin_peers'), lists, 10) })
  end)
end)
