-- Whether the cache serves each chain (gateway/lua/rpcstack/cache_live.lua).
local Live = require 'rpcstack.cache_live'

describe('cache live', function()
  it('logs each change of state once: why it cannot start, and when it is live', function()
    local lines = {}
    local live = Live.new(function(level, text) lines[#lines + 1] = level .. ' ' .. text end)
    live:report('eth', false, 'HTTP 403')
    live:report('eth', false, 'HTTP 403')
    assert.same({ 'warning rpcstack cache: chain eth: cannot read its final block (HTTP 403): its calls go to the node'
      .. ' uncached until it can' }, lines)
    live:report('eth', true)
    live:report('eth', true)
    live:report('eth', false, 'HTTP 502')
    assert.equal(3, #lines)
    assert.truthy(lines[2]:find('^notice .*chain eth: its final block is read, the cache is live'))
    assert.truthy(lines[3]:find('(HTTP 502)', 1, true))
  end)

  it('says 1 only for a chain whose last poll was answered', function()
    local live = Live.new(function() end)
    live:report('eth', true)
    live:report('strk', false, 'HTTP 403')
    local text = table.concat(live:lines({ eth = {}, strk = {}, new = {} }), '\n')
    assert.truthy(text:find('rpcstack_cache_live{chain="eth"} 1', 1, true))
    assert.truthy(text:find('rpcstack_cache_live{chain="strk"} 0', 1, true))
    assert.truthy(text:find('rpcstack_cache_live{chain="new"} 0', 1, true))
  end)
end)
