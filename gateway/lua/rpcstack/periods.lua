-- UTC calendar periods for quotas (gateway/quotas.ts): where the current month ends. A day ends
-- at the next multiple of 86400, which HAProxy's own arithmetic computes; a month's length
-- depends on the calendar, so it is worked out here without os.time (which reads local time).
local M = {}

-- Days from 1970-01-01 to the given UTC date (proleptic Gregorian; H. Hinnant's days_from_civil).
function M.days(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = (y >= 0 and y or y - 399) // 400
  local yoe = y - era * 400
  local doy = (153 * (m > 2 and m - 3 or m + 9) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

-- Seconds since the epoch at which the UTC month holding `now` ends (the next month's first second).
function M.month_end(now)
  local t = os.date('!*t', now)
  local y, m = t.year, t.month + 1
  if m == 13 then y, m = y + 1, 1 end
  return M.days(y, m, 1) * 86400
end

return M
