-- Messages the WebSocket filter holds, per address, and when a client is gone (gateway/lua/rpcstack/held.lua).
local held = require 'rpcstack.held'

-- A channel as the filter sees it (may_recv), and the request channel's own input and output.
local function chn(may) return { may_recv = function() return may end } end
local function req(input, output)
  return { input = function() return input end, output = function() return output end }
end
local BUFFER = { size = 131072, reserve = 8192 }

describe('held', function()
  it('counts each address apart, and forgets an address back at none', function()
    assert.equal(1, held.count('a', 1))
    assert.equal(2, held.count('a', 1))
    assert.equal(1, held.count('b', 1))
    assert.equal(1, held.count('a', -1))
    assert.equal(0, held.count('a', -1))
    assert.equal(1, held.count('a', 1))
    assert.equal(0, held.count('a', -1))
    assert.equal(0, held.count('b', -1))
  end)

  it('takes a client for gone only when its channel may not receive and the buffer is clearly below '
    .. 'its reserve', function()
    assert.is_false(held.client_gone(req(1008, 0), chn(true), BUFFER))
    assert.is_true(held.client_gone(req(1008, 0), chn(false), BUFFER))
    -- A full buffer (a node reading slowly) says the same of may_recv: not gone.
    assert.is_false(held.client_gone(req(122816, 0), chn(false), BUFFER))
    assert.is_false(held.client_gone(req(1008, 120000), chn(false), BUFFER))
  end)
end)
