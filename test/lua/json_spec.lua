-- The JSON reader shared by the method policy and the response cache (gateway/lua/rpcstack/json.lua).
local json = require 'rpcstack.json'

-- The text of each member's value, by lower-cased name, and the name as sent.
local function texts(s, m)
  local out = {}
  for k, v in pairs(m) do out[k] = { s:sub(v.a, v.b), v.k } end
  return out
end

-- Each text makes the reader raise an error.
local function refuses(read, bad)
  for _, s in ipairs(bad) do assert.has_error(function() read(s, 1) end, nil, s) end
end

describe('str', function()
  it('decodes a plain string without a table and answers the index after it', function()
    assert.same({ 'eth_call', 11 }, { json.str('"eth_call",', 1) })
  end)

  it('decodes every escape JSON has, \\u ones as UTF-8', function()
    assert.equal('a"b\\c/d\b\f\n\r\t', (json.str([["a\"b\\c\/d\b\f\n\r\t"]], 1)))
    assert.equal('debug_x', (json.str([["debug\u005fx"]], 1)))
    assert.equal('é€', (json.str([["\u00e9\u20AC"]], 1)))
  end)

  it('joins a surrogate pair into one code point and answers a lone surrogate with U+FFFD', function()
    assert.equal('\u{1F600}', (json.str([["\ud83d\ude00"]], 1)))
    assert.equal('\u{FFFD}x', (json.str([["\ud83dx"]], 1)))
    assert.equal('\u{FFFD}', (json.str([["\ude00"]], 1)))
  end)

  it('refuses what JSON refuses in a string: raw control characters, unknown escapes, short \\u, no end', function()
    refuses(json.str, { '"a\nb"', [["\x"]], [["\u12"]], '"abc', [["a\"]] })
  end)
end)

describe('members', function()
  it('refuses broken objects', function()
    refuses(json.members, { '{"a" 1}', '{"a":1,}', '{a:1}', '{"a":1', '{"a":tru}', '{"a":01x}' })
  end)

  it('answers each member as the raw span of its value, by lower-cased name, and the index after the object', function()
    local s = '{ "jsonrpc":"2.0", "Method" : "eth_call", "params":[1, {"a":2}], "id":7 } '
    local m, e = json.members(s, 1)
    assert.same({
      jsonrpc = { '"2.0"', 'jsonrpc' },
      method = { '"eth_call"', 'Method' },
      params = { '[1, {"a":2}]', 'params' },
      id = { '7', 'id' },
    }, texts(s, m))
    assert.equal(#s, e)
  end)

  it('gives up (nil) on a name that repeats, in any case or spelling', function()
    assert.is_nil(json.members('{"method":"a","method":"b"}', 1))
    assert.is_nil(json.members('{"method":"a","METHOD":"b"}', 1))
    assert.is_nil(json.members([[{"method":"a","m\u0065thod":"b"}]], 1))
  end)

  it('is nil for anything but an object, and empty for {}', function()
    assert.is_nil(json.members('[1]', 1))
    assert.same({}, (json.members('{ }', 1)))
  end)

end)

describe('elements and skipv', function()
  it('answers an array as the spans of its items', function()
    local s = '[ "a" , 1.5e3, null, [true], {"b":false} ]'
    local items, e = json.elements(s, 1)
    local got = {}
    for i, it in ipairs(items) do got[i] = s:sub(it.a, it.b) end
    assert.same({ '"a"', '1.5e3', 'null', '[true]', '{"b":false}' }, got)
    assert.equal(#s + 1, e)
  end)

  it('reads 64 levels of nesting and refuses a 65th', function()
    local deep = function(n) return string.rep('[', n) .. string.rep(']', n) end
    assert.equal(64 * 2 + 1, json.skipv(deep(64), 1, 1))
    assert.has_error(function() json.skipv(deep(65), 1, 1) end, 'too deep')
  end)

  it('skips strings with escaped quotes without decoding them', function()
    assert.equal(9, json.skipv([["a\"b\\"]], 1, 1))
  end)
end)

describe('skip and ws', function()
  it('find the next non-blank byte (JSON blanks only), or the end', function()
    assert.equal(4, json.skip(' \t\n{', 1))
    assert.equal(4, json.skip('{} ', 3))
    assert.equal(2, json.ws('\f{', 2))
    assert.equal(1, json.ws('\f{', 1))
  end)
end)
