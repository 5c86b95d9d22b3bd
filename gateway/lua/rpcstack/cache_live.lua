-- Whether the response cache serves each chain, said where an operator looks: a chain whose polls
-- of its final block fail is relayed without the cache, which nobody would notice otherwise (a
-- node that refuses the gateway's Host, say, with geth's 403 "invalid host specified").
--
--   new(log) -> live        log(level, text): where lines go (core.log in HAProxy); level is
--                           'warning' or 'notice'
--   live:report(chain, ok, why)   one poll's outcome (why: the error when not ok). Logs each
--       change of state only: a warning naming the chain and why, while the cache cannot start or
--       stopped; a notice once polls are answered again (or the first time)
--   live:lines(chains) -> { text }   the Prometheus lines of rpcstack_cache_live, one per chain
--       of `chains` (a table keyed by chain name): 1 while its last poll was answered, else 0
local Live = {}
Live.__index = Live

function Live.new(log)
  return setmetatable({ log = log, why = {} }, Live)
end

function Live:report(chain, ok, why)
  local last = self.why[chain]
  if ok and last ~= false then
    self.log('notice', 'rpcstack cache: chain ' .. chain .. ': its final block is read, the cache is live')
    self.why[chain] = false
  elseif not ok and last ~= tostring(why) then
    self.log('warning', 'rpcstack cache: chain ' .. chain .. ': cannot read its final block (' .. tostring(why)
      .. '): its calls go to the node uncached until it can')
    self.why[chain] = tostring(why)
  end
end

function Live:lines(chains)
  local out = {
    "# HELP rpcstack_cache_live 1 while the last poll of the chain's final block was answered "
      .. '(the cache serves it), else 0.',
    '# TYPE rpcstack_cache_live gauge',
  }
  for chain in pairs(chains) do
    out[#out + 1] = string.format('rpcstack_cache_live{chain="%s"} %d', chain, self.why[chain] == false and 1 or 0)
  end
  return out
end

return Live
