local periods = require 'rpcstack.periods'

describe('quota periods', function()
  it('counts days from the epoch', function()
    assert.are.equal(0, periods.days(1970, 1, 1))
    assert.are.equal(20785, periods.days(2026, 11, 28))
    assert.are.equal(-1, periods.days(1969, 12, 31))
  end)

  it("ends a month at the next month's first second", function()
    -- 2026-11-27T11:30:00Z -> 2026-12-01T00:00:00Z
    assert.are.equal(1796083200, periods.month_end(1795779000))
    -- the year's last second -> the next year's first
    assert.are.equal(1798761600, periods.month_end(1798761599))
    -- a leap February, and 2100's February, which has no 29th
    assert.are.equal(1709251200, periods.month_end(1709208000))
    assert.are.equal(4107542400, periods.month_end(4107542399))
  end)

  it('gives the first second of a month its own month', function()
    assert.are.equal(1798761600, periods.month_end(1796083200))
  end)
end)
