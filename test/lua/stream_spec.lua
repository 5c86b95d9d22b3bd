-- Length-prefixed units as the Lua filters forward them (gateway/lua/rpcstack/stream.lua), read
-- here as the WebSocket frames a node sends (rpcstack/ws.lua's header).
local stream = require('rpcstack.stream')
local ws = require('rpcstack.ws')

describe('forward', function()
  -- A message stand-in: the bytes the channel holds.
  local function msg(bytes)
    return { body = function(_, pos, len) return bytes:sub(pos + 1, pos + len) end }
  end
  local function reader()
    return { left = 0, seen = {}, header = function(self, _, h)
      local hlen, len = ws.header(h)
      if hlen then self.seen[#self.seen + 1] = len end
      return hlen, len
    end }
  end

  it('passes whole frames, and a frame whose header is cut stops at its start', function()
    local r = reader()
    local two = string.char(0x81, 2) .. 'ab' .. string.char(0x81, 1) .. 'c'
    assert.equal(#two, stream.forward(r, nil, msg(two), #two, 14))
    assert.same({ 2, 1 }, r.seen)
    local cut = string.char(0x81, 1) .. 'x' .. string.char(0x82)
    assert.equal(3, stream.forward(reader(), nil, msg(cut), #cut, 14))
  end)

  it('keeps a frame that straddles two calls, and counts what is left of it', function()
    local r = reader()
    local first = string.char(0x81, 4) .. 'ab'
    assert.equal(4, stream.forward(r, nil, msg(first), #first, 14))
    assert.equal(2, r.left)
    assert.equal(2, stream.forward(r, nil, msg('cd'), 2, 14))
    assert.equal(0, r.left)
  end)
end)
