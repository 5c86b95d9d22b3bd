-- The JSON reader's literals and strings (gateway/lua/rpcstack/json.lua), as RFC 8259 writes them.
local json = require 'rpcstack.json'

describe('literal', function()
  it('reads numbers, true, false and null exactly', function()
    for text, after in pairs({ ['0'] = 2, ['-0'] = 3, ['12'] = 3, ['1.5'] = 4, ['1e5'] = 4, ['1E+5'] = 5, ['-1.25e-7'] = 9, ['true'] = 5, ['false'] = 6, ['null'] = 5 }) do
      assert.are.equal(after, json.literal(text, 1), text)
    end
  end)

  it('stops where the number stops, so the reader sees what follows', function()
    assert.are.equal(2, json.literal('01', 1))
    assert.are.equal(2, json.literal('1.', 1))
    assert.are.equal(2, json.literal('1e', 1))
    for _, text in ipairs({ '.5', '+1', '-', 'tru', 'nul' }) do assert.is_nil(json.literal(text, 1), text) end
    for _, text in ipairs({ '[01]', '[1.]', '[1e]', '[1-]', '[-01]' }) do assert.has_error(function() json.skipv(text, 1, 1) end, nil, text) end
  end)

  it('refuses escapes JSON does not have', function()
    assert.has_error(function() json.skipv('"\\x"', 1, 1) end)
    assert.has_error(function() json.skipv('"\\u12G4"', 1, 1) end)
    assert.are.equal(15, json.skipv('"\\u00e9\\n\\/\\""', 1, 1))
  end)
end)
