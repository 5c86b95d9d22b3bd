// Follows the Starknet node block by block and prints one JSON line per block (and, with
// INDEXER_CONTRACT set, one per event that contract emitted). Node 18+, no dependencies.
//   L2_RPC_URL            JSON-RPC endpoint of the L2 node (required)
//   INDEXER_POLL_SECONDS  seconds between head polls (default 10)
//   INDEXER_START_BLOCK   first block to index (default: the head at start)
//   INDEXER_CONTRACT      contract address whose events to print (optional)
//   INDEXER_MAX_BLOCKS    stop after this many blocks (optional; for tests)

const url = process.env.L2_RPC_URL;
if (!url) {
  console.error("indexer: L2_RPC_URL is not set");
  process.exit(2);
}
const pollMs = Number(process.env.INDEXER_POLL_SECONDS ?? "10") * 1000;
const contract = process.env.INDEXER_CONTRACT;
const maxBlocks = process.env.INDEXER_MAX_BLOCKS ? Number(process.env.INDEXER_MAX_BLOCKS) : Infinity;
// Nothing is held between blocks, so a stop request can end the process at once.
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const toNumber = (v) => (typeof v === "string" ? Number.parseInt(v, v.startsWith("0x") ? 16 : 10) : v);
let nextId = 1;

async function rpc(method, params = []) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    signal: AbortSignal.timeout(15_000),
  });
  if (!res.ok) throw new Error(`${method}: HTTP ${res.status}`);
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
  return body.result;
}

async function indexBlock(n) {
  const block = await rpc("starknet_getBlockWithTxHashes", [{ block_number: n }]);
  console.log(JSON.stringify({ block: n, hash: block.block_hash, timestamp: block.timestamp, transactions: block.transactions.length }));
  if (!contract) return;
  let token;
  do {
    const filter = { from_block: { block_number: n }, to_block: { block_number: n }, address: contract, chunk_size: 100, ...(token ? { continuation_token: token } : {}) };
    const page = await rpc("starknet_getEvents", [filter]);
    for (const e of page.events) console.log(JSON.stringify({ block: n, event: e }));
    token = page.continuation_token;
  } while (token);
}

let next = process.env.INDEXER_START_BLOCK ? Number(process.env.INDEXER_START_BLOCK) : undefined;
let done = 0;
let failures = 0;
while (done < maxBlocks) {
  try {
    const head = toNumber(await rpc("starknet_blockNumber"));
    next ??= head;
    while (next <= head && done < maxBlocks) {
      await indexBlock(next);
      next++;
      done++;
    }
    failures = 0;
    if (done < maxBlocks) await sleep(pollMs);
  } catch (err) {
    failures++;
    const wait = Math.min(pollMs * 2 ** Math.min(failures, 6), 5 * 60_000);
    console.error(`indexer: ${err.message}; retrying in ${(wait / 1000).toFixed(1)}s`);
    await sleep(wait);
  }
}
