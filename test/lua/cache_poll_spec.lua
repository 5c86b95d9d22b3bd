-- The response cache's poll of each chain (gateway/lua/rpcstack/cache_poll.lua): the final block
-- each chain kind names, and a node that holds another chain than the store.
local Poll = require 'rpcstack.cache_poll'

-- A node: hashes by block number, its final block (nil: no finality tag) and its head.
local function node(kind)
  local n = { kind = kind, hashes = {}, final = nil, head = 0, status = 200, asked = {} }
  function n.answer(body)
    local method = body:match('"method":"([^"]+)"')
    local params = body:match('"params":(.*)}$')
    n.asked[#n.asked + 1] = method .. params
    if method == 'eth_blockNumber' then return string.format('"0x%x"', n.head) end
    local at
    if params:find('finalized', 1, true) or params:find('l1_accepted', 1, true) then at = n.final
    else at = tonumber(params:match('"0x(%x+)"') or '', 16) or tonumber(params:match('"block_number":(%d+)')) end
    local h = at and n.hashes[at]
    if not h then return 'null' end
    if kind == 'evm' then return string.format('{"number":"0x%x","hash":"%s"}', at, h) end
    return string.format('{"block_number":%d,"block_hash":"%s"}', at, h)
  end
  return n
end

local function fresh(nodes, depth)
  local chains, view, stats, dropped, reports = {}, {}, {}, {}, {}
  for name, n in pairs(nodes) do
    chains[name] = { kind = n.kind, depth = depth or 0 }
    view[name] = {}
    stats[name] = { changes = 0 }
  end
  local poll = Poll.new({
    chains = chains, view = view, stats = stats, agent = 'rpcstack-cache',
    fetch = function(chain, body, headers)
      assert.same({ 'rpcstack-cache' }, headers['user-agent'])
      local n = nodes[chain]
      if n.status ~= 200 then return { status = n.status, body = 'invalid host specified' } end
      return { status = 200, body = '{"jsonrpc":"2.0","id":1,"result":' .. n.answer(body) .. '}' }
    end,
    drop = function(name) dropped[#dropped + 1] = name end,
    report = function(name, ok, why) reports[#reports + 1] = name .. ' ' .. tostring(ok) .. ' ' .. tostring(why) end,
  })
  return poll, view, stats, dropped, reports
end

describe('cache poll', function()
  it("keeps each chain's final block, EVM finalized and Starknet l1_accepted, and says the chain is live", function()
    local eth, strk = node('evm'), node('starknet')
    eth.hashes = { [0] = '0xg', [5] = '0xe5' }
    eth.final = 5
    strk.hashes = { [0] = '0x0', [7] = '0x7' }
    strk.final = 7
    local poll, view, _, dropped = fresh({ eth = eth, strk = strk })
    assert.is_nil(poll.live.eth)
    poll.round()
    assert.equal(5, view.eth.final)
    assert.equal(7, view.strk.final)
    assert.is_true(poll.live.eth)
    assert.is_true(poll.live.strk)
    assert.same({}, dropped)
  end)

  it('a node without a finality tag: the block a fixed depth below its head; genesis while there is none', function()
    local eth = node('evm')
    eth.hashes = { [0] = '0xg', [36] = '0xa' }
    eth.head = 40
    local poll, view = fresh({ eth = eth }, 64)
    poll.round()
    assert.is_nil(view.eth.final)
    assert.is_true(poll.live.eth)
    eth.head = 100
    poll.round()
    assert.equal(36, view.eth.final)
  end)

  it('another hash at the anchor is another chain: its entries go, its epoch moves on; one chain keeps them', function()
    local eth = node('evm')
    eth.hashes = { [0] = '0xg', [5] = '0xe5', [9] = '0xe9' }
    eth.final = 5
    local poll, _, stats, dropped = fresh({ eth = eth })
    poll.round()
    eth.final = 9
    poll.round()
    assert.same({}, dropped)
    -- The node started afresh: block 5 has another hash now.
    eth.hashes = { [0] = '0xh', [5] = '0xf5', [9] = '0xf9' }
    poll.round()
    assert.same({ 'eth' }, dropped)
    assert.equal(1, poll.epoch.eth)
    assert.equal(1, stats.eth.changes)
    assert.is_true(poll.live.eth)
  end)

  it('a node reset between the two reads of one poll: one change, and the next poll finds the same chain', function()
    local eth = node('evm')
    eth.hashes = { [0] = '0xg', [5] = '0xe5', [9] = '0xe9' }
    eth.final = 5
    local poll, view, stats, dropped = fresh({ eth = eth })
    poll.round()
    eth.final = 9
    -- The final block is read on the old chain; the anchor's block on the new one.
    local answer = eth.answer
    eth.answer = function(body)
      local a = answer(body)
      eth.hashes, eth.final, eth.answer = { [0] = '0xh' }, nil, answer
      return a
    end
    poll.round()
    assert.equal(1, stats.eth.changes)
    assert.is_nil(view.eth.final)
    poll.round()
    poll.round()
    assert.equal(1, stats.eth.changes)
    assert.same({ 'eth' }, dropped)
  end)

  it('a node that cannot be read: the chain is not live, and why is reported', function()
    local eth = node('evm')
    eth.hashes, eth.final = { [0] = '0xg' }, 0
    local poll, _, _, _, reports = fresh({ eth = eth })
    poll.round()
    eth.status = 403
    poll.round()
    assert.is_false(poll.live.eth)
    assert.same({ 'eth true nil', 'eth false HTTP 403' }, reports)
  end)
end)
