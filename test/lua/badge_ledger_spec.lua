local Ledger = require 'rpcstack.badge_ledger'

describe('badge ledger', function()
  it('counts calls per badge and refuses past the allowance', function()
    local l = Ledger.new(10, 5)
    assert.is_nil((l:spend('a', 1000, 3, 1, 900)))
    assert.is_nil((l:spend('a', 1000, 3, 2, 900)))
    local v, spent = l:spend('a', 1000, 3, 1, 901)
    assert.are.equal('spent', v)
    assert.are.equal(4, spent)
    -- another badge has its own allowance
    assert.is_nil((l:spend('b', 1000, 3, 3, 901)))
  end)

  it('counts a batch as its calls', function()
    local l = Ledger.new(10, 5)
    assert.are.equal('spent', (l:spend('a', 1000, 5, 6, 900)))
  end)

  it('refuses an expired badge, granting the skew', function()
    local l = Ledger.new(10, 5)
    assert.is_nil((l:spend('a', 1000, 5, 1, 1005)))
    assert.are.equal('expired', (l:spend('a', 1000, 5, 1, 1006)))
  end)

  it('holds at most max badges, and frees them once their minute has passed', function()
    local l = Ledger.new(2, 5)
    assert.is_nil((l:spend('a', 1000, 5, 1, 900)))
    assert.is_nil((l:spend('b', 1000, 5, 1, 900)))
    assert.are.equal('full', (l:spend('c', 1000, 5, 1, 900)))
    -- a badge already held still counts when the ledger is full
    assert.is_nil((l:spend('a', 1000, 5, 1, 900)))
    -- exp 1000 is in minute 16 (960-1019): gone once 1020 + skew has passed
    assert.are.equal(2, l.held)
    assert.is_nil((l:spend('c', 2000, 5, 1, 1025)))
    assert.are.equal(1, l.held)
  end)

  it('remembers verified badges by digest until they expire', function()
    local l = Ledger.new(2, 5)
    assert.is_false(l:known('d1', 900))
    l:remember('d1', 1000, 900)
    assert.is_true(l:known('d1', 1005))
    assert.is_false(l:known('d1', 1006))
    assert.is_false(l:known('d2', 900))
    -- bounded: past max, nothing more is remembered (those badges are verified each time)
    l:remember('d2', 1000, 900)
    l:remember('d3', 1000, 900)
    assert.is_false(l:known('d3', 900))
    -- once their minute has passed, the entries go
    l:remember('d4', 2000, 1025)
    assert.are.equal(1, l.seen_held)
    assert.is_true(l:known('d4', 1025))
  end)

  it('is one ledger for every program that asks', function()
    assert.are.equal(Ledger.shared(5, 5), Ledger.shared(7, 1))
  end)
end)
