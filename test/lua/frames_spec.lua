-- WebSocket frame headers as the Lua filters read them (gateway/lua/rpcstack/frames.lua).
local frames = require('rpcstack.frames')

describe('ws_header', function()
  it('reads the 7-bit, 16-bit and 64-bit lengths, with and without a mask', function()
    assert.same({ 2, 5 }, { frames.ws_header(string.char(0x81, 5)) })
    assert.same({ 6, 5 }, { frames.ws_header(string.char(0x81, 0x85, 1, 2, 3, 4)) })
    assert.same({ 4, 300 }, { frames.ws_header(string.char(0x82, 126, 1, 44)) })
    assert.same({ 10, 65536 }, { frames.ws_header(string.char(0x82, 127, 0, 0, 0, 0, 0, 1, 0, 0)) })
  end)

  it('answers nothing while the header is not all in', function()
    assert.same({}, { frames.ws_header(string.char(0x81)) })
    assert.same({}, { frames.ws_header(string.char(0x81, 0x85, 1, 2)) })
    assert.same({}, { frames.ws_header(string.char(0x82, 126, 1)) })
  end)
end)

describe('forward', function()
  -- A message stand-in: the bytes the channel holds.
  local function msg(bytes)
    return { body = function(_, pos, len) return bytes:sub(pos + 1, pos + len) end }
  end
  local function reader()
    return { left = 0, seen = {}, header = function(self, _, h)
      local hlen, len = frames.ws_header(h)
      if hlen then self.seen[#self.seen + 1] = len end
      return hlen, len
    end }
  end

  it('passes whole frames, and a frame whose header is cut stops at its start', function()
    local r = reader()
    local two = string.char(0x81, 2) .. 'ab' .. string.char(0x81, 1) .. 'c'
    assert.equal(#two, frames.forward(r, nil, msg(two), #two, 14))
    assert.same({ 2, 1 }, r.seen)
    local cut = string.char(0x81, 1) .. 'x' .. string.char(0x82)
    assert.equal(3, frames.forward(reader(), nil, msg(cut), #cut, 14))
  end)

  it('keeps a frame that straddles two calls, and counts what is left of it', function()
    local r = reader()
    local first = string.char(0x81, 4) .. 'ab'
    assert.equal(4, frames.forward(r, nil, msg(first), #first, 14))
    assert.equal(2, r.left)
  end)
end)
