-- Quotas (gateway/quotas.ts): the converter quota_month_end turns `date` into the second the
-- current UTC month ends, for the reset time of a monthly quota. Loaded by HAProxy's lua-load.
local periods = require('rpcstack.periods')

core.register_converters('quota_month_end', function(now)
  return periods.month_end(math.tointeger(tonumber(now)))
end)
