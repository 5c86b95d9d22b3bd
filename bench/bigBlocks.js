// A stand-in EVM node for the cache bench's miss and share phases (the bench chain's blocks are
// ~180 KiB, and geth takes no transaction over 128 KiB, so hundreds of distinct 1 MiB blocks would
// be a chain of their own): every block up to FINAL exists and is final, and asked
// for with full transactions it is about argv[3] bytes of JSON, so distinct big misses come at will.
// argv: port, block bytes, milliseconds each answer waits (the node's own work).
const { createServer } = require("node:http");

const [port, blockBytes, latencyMs] = process.argv.slice(2).map(Number);
const FINAL = 0xffffff;
const hash = (n) => `"0x${n.toString(16).padStart(64, "0")}"`;
// The same transaction hashes in every full block: only the block's number and hash differ.
const FULL = Array.from({ length: Math.ceil(blockBytes / 69) }, (_, i) => hash(FINAL + 1 + i)).join(",");

const block = (n, full) =>
  `{"number":"0x${n.toString(16)}","hash":${hash(n)},"parentHash":${hash(Math.max(n - 1, 0))},"transactions":[${full ? FULL : ""}]}`;

function result(method, params) {
  if (method === "eth_blockNumber") return `"0x${FINAL.toString(16)}"`;
  if (method === "eth_chainId") return '"0x1"';
  if (method !== "eth_getBlockByNumber") return "null";
  const id = params[0];
  const n = id === "finalized" || id === "latest" ? FINAL : /^0x[0-9a-f]+$/.test(id) ? parseInt(id, 16) : -1;
  return n >= 0 && n <= FINAL ? block(n, params[1] === true) : "null";
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (d) => chunks.push(d));
  req.on("end", () => {
    let call;
    try {
      call = JSON.parse(Buffer.concat(chunks).toString());
    } catch {
      res.writeHead(400).end();
      return;
    }
    const body = `{"jsonrpc":"2.0","id":${JSON.stringify(call.id ?? null)},"result":${result(call.method, call.params ?? [])}}`;
    setTimeout(() => res.writeHead(200, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }).end(body), latencyMs);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, "127.0.0.1");
