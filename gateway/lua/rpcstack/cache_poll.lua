-- The response cache's poll of each chain: reads its final block (Ethereum `finalized`, Starknet
-- `l1_accepted`) and checks that the node still holds the chain the store holds; if not, the
-- chain's entries go. No HAProxy here: the requests go through o.fetch.
--
--   new(o) -> poll, o: { chains (name -> { kind, depth }), view (name -> the chain as the key
--       functions see it: its `final` is kept up to date), stats (name -> counts: `changes`),
--       agent (the polls' user-agent), fetch(chain, body, headers, timeout) -> { status, body }
--       (raises when the node cannot be reached), drop(name) (the chain's entries and flights go),
--       report(name, ok, why) (each poll's outcome) }
--   poll.live[name]   whether the last poll found the chain the store holds (until then nothing
--                     is answered or kept)
--   poll.epoch[name]  how often its entries were dropped (a fetch begun before is not kept)
--   poll.round()      polls every chain once
local json = require 'rpcstack.json'
local keys = require 'rpcstack.cache_keys'

local skip, members, hexq = json.skip, json.members, keys.hexq

-- How each kind names a block by tag or number, and where its number and hash are.
local BLOCKS = {
  evm = {
    method = 'eth_getBlockByNumber', final = '"finalized"', number = 'number', hash = 'hash',
    params = function(id) return '[' .. id .. ',false]' end,
    at = function(n) return string.format('"0x%x"', n) end,
    read = function(raw) local _, n = hexq(raw); return n end,
  },
  starknet = {
    method = 'starknet_getBlockWithTxHashes', final = '"l1_accepted"', number = 'block_number', hash = 'block_hash',
    params = function(id) return '[' .. id .. ']' end,
    at = function(n) return '{"block_number":' .. n .. '}' end,
    read = function(raw) return raw:match('^%d+$') and tonumber(raw) end,
  },
}

local function new(o)
  -- Per chain: ANCHOR the block the chain is known by, { n, h }; LIVE and EPOCH as above.
  local ANCHOR, LIVE, EPOCH = {}, {}, {}
  for name in pairs(o.chains) do EPOCH[name] = 0 end
  local HEADERS = { ['content-type'] = { 'application/json' }, ['user-agent'] = { o.agent } }

  -- One call of the cache's own; the answer's text and its result's span (nil: the node answered
  -- with an error). Raises when the node cannot be reached or answers no JSON-RPC.
  local function rpc(chain, method, params)
    local body = '{"jsonrpc":"2.0","id":1,"method":"' .. method .. '","params":' .. params .. '}'
    local res = o.fetch(chain, body, HEADERS, 10000)
    if not res or res.status ~= 200 then error('HTTP ' .. tostring(res and res.status or 'none'), 0) end
    local b = res.body or ''
    local m = members(b, skip(b, 1))
    if not m then error('not a JSON-RPC answer', 0) end
    return b, m.result
  end

  -- The number and hash of the block `id` names; nil when the node has none.
  local function block(chain, kind, id)
    local k = BLOCKS[kind]
    local b, r = rpc(chain, k.method, k.params(id))
    local rm = r and members(b, r.a)
    if not rm or not rm[k.number] or not rm[k.hash] then return nil end
    local n = k.read(b:sub(rm[k.number].a, rm[k.number].b))
    return n, n and b:sub(rm[k.hash].a, rm[k.hash].b)
  end

  -- The final block: the node's finality tag, else (evm) a fixed depth below its head.
  local function final_block(name, c)
    local k = BLOCKS[c.kind]
    local n, h = block(name, c.kind, k.final)
    if not n and c.depth > 0 then
      local b, r = rpc(name, 'eth_blockNumber', '[]')
      local _, head = hexq(r and b:sub(r.a, r.b) or '')
      if head and head >= c.depth then n, h = block(name, c.kind, k.at(head - c.depth)) end
    end
    return n, h
  end

  -- The node holds another chain than the store: a node started afresh (geth --dev keeps its
  -- chain in memory, so a restart begins a new one) or replaced. Its entries go; a fetch begun
  -- before is not kept, and no call joins one.
  local function changed(name)
    o.drop(name)
    EPOCH[name] = EPOCH[name] + 1
    o.stats[name].changes = o.stats[name].changes + 1
  end

  -- The chain is known by a block that was final (genesis while none is): the anchor. Each poll
  -- reads the final block and asks for the anchor's number again; another hash there (or none)
  -- is another chain. A final block below the anchor on the same chain (a node fault, or a reorg
  -- of the head under a fixed depth) leaves the anchor where it was, and what is held stays true
  -- (every entry is at or below the anchor, on the chain the anchor's hash fixes).
  -- The final block, else genesis: the block a chain can be known by.
  local function known_by(name, c)
    local final, h = final_block(name, c)
    local n = final
    if not n then n, h = block(name, c.kind, BLOCKS[c.kind].at(0)) end
    if not n then error('no block to know the chain by', 0) end
    return final, n, h
  end

  local function poll(name, c)
    local final, n, h = known_by(name, c)
    local a = ANCHOR[name]
    if a then
      local then_hash = h
      if n ~= a.n then
        local _, ah = block(name, c.kind, BLOCKS[c.kind].at(a.n))
        then_hash = ah
      end
      if then_hash ~= a.h then
        changed(name)
        a = nil
        -- The first read may have come before the change (a node reset between the two reads):
        -- the new anchor is read again, or the next poll would count the same change twice.
        final, n, h = known_by(name, c)
      end
    end
    if not a or n >= a.n then ANCHOR[name] = { n = n, h = h } end
    o.view[name].final = final
    LIVE[name] = true
  end

  local function round()
    for name, c in pairs(o.chains) do
      local ok, why = pcall(poll, name, c)
      if not ok then LIVE[name] = false end
      o.report(name, ok, why)
    end
  end

  return { live = LIVE, epoch = EPOCH, round = round }
end

return { new = new }
