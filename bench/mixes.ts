/**
 * The request mixes wrk sends (as wrk Lua scripts, generated here) and the chain they read:
 * - the read mix (the cache bench's): 50% eth_getBlockByNumber on older blocks, 20% receipts,
 *   10% eth_chainId, 10% eth_blockNumber, 10% `latest` blocks; at most 80% can be cached;
 * - the relay mix: eth_blockNumber and eth_call on `latest`, half each, which no cache may answer.
 * Every call carries its own id (a counter), so a cache that answered with a stored id would show.
 */
import { jsonRpc } from "../devtools/net.js";

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

/** The read mix over blocks 1..old and these transaction hashes; the path is each case's URL's. */
export function readMixLua(old: number, txs: readonly string[]): string {
  if (old < 1 || !txs.length) throw new Error("the read mix needs at least one old block and one transaction");
  return `local txs = { ${txs.map(hexLiteral).join(", ")} }
${header}request = function()
  local r = math.random(100)
  if r <= 50 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",false]}', math.random(1, ${old}))
  elseif r <= 70 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionReceipt","params":["%s"]}', txs[math.random(#txs)])
  elseif r <= 80 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_chainId","params":[]}')
  elseif r <= 90 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}')
  else return call('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["latest",false]}') end
end
`;
}

/** The relay mix: eth_blockNumber, and eth_call of `contract` at `latest`, alternately. */
export function relayMixLua(contract: string): string {
  return `${header}request = function()
  if n % 2 == 0 then return call('{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}')
  else return call('{"jsonrpc":"2.0","id":%d,"method":"eth_call","params":[{"to":${hexLiteral(contract)},"data":"0x"},"latest"]}') end
end
`;
}

/**
 * A contract that returns its storage slot 0 (one SLOAD per eth_call, so the node does real EVM
 * work): runtime PUSH1 0 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN, behind a constructor that
 * copies it out.
 */
export const SLOT_READER_INITCODE = "0x600b600c600039600b6000f3" + "60005460005260206000f3";

export interface SeededChain {
  /** The node's head after seeding. */
  readonly head: number;
  /** Hashes of the transactions sent, each mined in a block of its own. */
  readonly txs: string[];
  /** The slot reader's address (relay mix). */
  readonly contract: string;
}

/** Hundreds of blocks and transactions on a fresh dev node (hardhat mines each transaction at once). */
export async function seedChain(url: string, transactions = 300): Promise<SeededChain> {
  const [from, to] = await jsonRpc(url, "eth_accounts");
  const txs: string[] = [];
  for (let i = 0; i < transactions; i++) txs.push(await jsonRpc(url, "eth_sendTransaction", [{ from, to, value: "0x1" }]));
  const deploy = await jsonRpc(url, "eth_sendTransaction", [{ from, data: SLOT_READER_INITCODE }]);
  const contract = (await jsonRpc(url, "eth_getTransactionReceipt", [deploy])).contractAddress as string;
  return { head: parseInt(await jsonRpc(url, "eth_blockNumber"), 16), txs, contract };
}
