/**
 * The request mixes wrk sends (as wrk Lua scripts, generated here) over the bench chain (bench/node.ts):
 * - the read mix (the cache and peers benches'): at most 80% can be cached (readMixLua);
 * - the relay mix: eth_blockNumber and eth_call on `latest`, half each, which no cache may answer.
 * Every call carries its own id (a counter), so a cache that answered with a stored id would show.
 */

/** Lua string literal for a hex string we produced (0x and hex digits only). */
const hexLiteral = (h: string) => {
  if (!/^0x[0-9a-fA-F]*$/.test(h)) throw new Error(`not a hex string: ${h}`);
  return `"${h}"`;
};

const header = `local n = 0
math.randomseed(os.time())
local function call(fmt, ...)
  n = n + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, string.format(fmt, n, ...))
end
`;

export interface MixChain {
  /** Final blocks with transactions, first and last: reads of them are what a cache may keep. */
  readonly oldFirst: number;
  readonly oldLast: number;
  /** Transactions mined in those blocks (receipts to read). */
  readonly txs: readonly string[];
  /**
   * eth_getLogs of one contract's event by its pair topic (the third, one of `pairs`) over a page of
   * `span` final blocks (pages counted from oldFirst), as a dapp's clients page through its events.
   */
  readonly logs: { readonly address: string; readonly topic: string; readonly pairs: number; readonly span: number };
  /** The relay mix's eth_call at `latest`. */
  readonly call: { readonly to: string; readonly data: string };
}

/**
 * The read mix (the path is each case's URL's). What a cache may keep once final (80%): 10%
 * eth_chainId, 30% blocks without and 5% with their transactions, 25% receipts, 10% eth_getLogs of
 * one pair's trades over a page of `span` final blocks; never (20%): 10% eth_blockNumber, 10% the `latest` block.
 */
export function readMixLua(chain: MixChain): string {
  const { oldFirst, oldLast, txs, logs } = chain;
  if (oldFirst < 1 || oldLast - logs.span < oldFirst || !txs.length) throw new Error("the read mix needs final blocks (more than a log span of them) and at least one transaction");
  if (logs.pairs < 1 || logs.pairs > 255) throw new Error(`the read mix takes 1-255 pairs, not ${logs.pairs}`);
  return `local txs = { ${txs.map(hexLiteral).join(", ")} }
${header}local function old() return math.random(${oldFirst}, ${oldLast}) end
request = function()
  local r = math.random(100)
  if r <= 10 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_chainId","params":[]}')
  elseif r <= 40 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",false]}', old())
  elseif r <= 45 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",true]}', old())
  elseif r <= 70 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionReceipt","params":["%s"]}', txs[math.random(#txs)])
  elseif r <= 80 then
    local from = ${oldFirst} + ${logs.span} * math.random(0, ${Math.floor((oldLast - oldFirst + 1) / logs.span) - 1})
    return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getLogs","params":[{"fromBlock":"0x%x","toBlock":"0x%x","address":${hexLiteral(logs.address)},"topics":[${hexLiteral(logs.topic)},null,"0x%064x"]}]}', from, from + ${logs.span - 1}, math.random(0, ${logs.pairs - 1}))
  elseif r <= 90 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}')
  else return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["latest",false]}') end
end
`;
}

/**
 * Every call of the read mix a cache may keep, once each in turn and then again (one id): run
 * before the rounds, it leaves a cache as a long-lived gateway's would be, holding the whole
 * working set, so the rounds measure the mix's steady state rather than how fast it fills.
 */
/** How many calls one walk of warmMixLua makes. */
export function warmMixCalls(chain: MixChain): number {
  return 1 + 2 * (chain.oldLast - chain.oldFirst + 1) + chain.txs.length + Math.floor((chain.oldLast - chain.oldFirst + 1) / chain.logs.span) * chain.logs.pairs;
}

export function warmMixLua(chain: MixChain): string {
  readMixLua(chain);
  const { oldFirst, oldLast, txs, logs } = chain;
  return `local txs = { ${txs.map(hexLiteral).join(", ")} }
local calls = { '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' }
local function add(fmt, ...) calls[#calls + 1] = string.format(fmt, ...) end
for b = ${oldFirst}, ${oldLast} do
  add('{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x%x",false]}', b)
  add('{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x%x",true]}', b)
end
for _, t in ipairs(txs) do add('{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionReceipt","params":["%s"]}', t) end
for page = 0, ${Math.floor((oldLast - oldFirst + 1) / logs.span) - 1} do
  local from = ${oldFirst} + ${logs.span} * page
  for pair = 0, ${logs.pairs - 1} do
    add('{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x%x","toBlock":"0x%x","address":${hexLiteral(logs.address)},"topics":[${hexLiteral(logs.topic)},null,"0x%064x"]}]}', from, from + ${logs.span - 1}, pair)
  end
end
local i = 0
request = function()
  i = i % #calls + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, calls[i])
end
`;
}

/** The relay mix: eth_blockNumber, and the chain's eth_call at `latest`, alternately: calls every client makes alike, which no cache may keep. */
export function relayMixLua(call: MixChain["call"]): string {
  return `${header}request = function()
  if n % 2 == 0 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}')
  else return call('{"jsonrpc":"2.0","id":%d,"method":"eth_call","params":[{"to":${hexLiteral(call.to)},"data":${hexLiteral(call.data)}},"latest"]}') end
end
`;
}
