-- Filters created per key over a sliding window (gateway/lua/rpcstack/filter_budget.lua).
local Budget = require 'rpcstack.filter_budget'

describe('filter budget', function()
  it('lets a key create max filters in a window, and no more', function()
    local b = Budget.new(10, 300)
    assert.equal(10, b:left('k', 3000))
    b:take('k', 7, 3000)
    assert.equal(3, b:left('k', 3100))
    b:take('k', 3, 3100)
    assert.equal(0, b:left('k', 3299))
    -- Other keys have their own.
    assert.equal(10, b:left('other', 3299))
  end)

  it('gives creations back as the window slides past them, and all of them after two windows', function()
    local b = Budget.new(10, 300)
    b:take('k', 10, 3000)
    -- Half-way through the next window half of the last one still counts.
    assert.equal(5, b:left('k', 3450))
    assert.equal(10, b:left('k', 3600))
    b:take('k', 10, 3600)
    assert.equal(10, b:left('k', 4500))
  end)

  it('is one budget for the whole gateway', function()
    assert.equal(Budget.shared(5, 60), Budget.shared(99, 1))
  end)
end)
