#!/usr/bin/env node
// Stands in for `geth --dev` (ethereum/client-go, entrypoint `geth`): takes the devnet command
// line as the package writes it (services/l1.ts gethDev), refuses any flag it does not implement,
// and serves a chain of empty blocks, one every --dev.period seconds stamped with the clock (what
// geth's simulated beacon does: eth/catalyst/simulated_beacon.go), chain id 1337, as JSON-RPC on
// --http.port and WebSocket on --ws.port limited to --http.api/--ws.api, and metrics. It does not
// prove that the pinned geth accepts these flags (the flag fixture of the geth image does) nor
// execute transactions. Plain CommonJS for Node 18+, needs only `ws`.
"use strict";
const crypto = require("crypto");
const http = require("http");
const { WebSocketServer } = require("ws");

const NAME = "geth";
// What services/l1.ts passes to geth --dev; anything else is refused, so a new flag is noticed here.
const VALUED = new Set(["dev.period", "http.addr", "http.port", "http.api", "http.vhosts", "ws.addr", "ws.port", "ws.api", "ws.origins", "metrics.addr", "metrics.port"]);
const BOOLEAN = new Set(["dev", "http", "ws", "metrics"]);

function die(message) {
  process.stderr.write(`${NAME}: Fatal: ${message}\n`);
  process.exit(1);
}

const flags = new Map();
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const body = argv[i].replace(/^--?/, "");
  if (body === argv[i]) die(`unexpected argument "${argv[i]}"`);
  const eq = body.indexOf("=");
  const name = eq >= 0 ? body.slice(0, eq) : body;
  let value = eq >= 0 ? body.slice(eq + 1) : undefined;
  if (!VALUED.has(name) && !BOOLEAN.has(name)) die(`flag provided but not implemented by the geth --dev stand-in: -${name}`);
  if (value === undefined && VALUED.has(name)) value = argv[++i];
  flags.set(name, value === undefined ? true : value);
}
if (!flags.has("dev")) die("the stand-in runs only as geth --dev");
const period = Number(flags.get("dev.period") || 0);
const CHAIN_ID = 1337;

const hex = (n) => `0x${n.toString(16)}`;
const blocks = [];
const heads = new Set();
function seal() {
  const number = blocks.length;
  const parentHash = number ? blocks[number - 1].hash : `0x${"0".repeat(64)}`;
  const hash = `0x${crypto.createHash("sha256").update(`${parentHash}:${number}`).digest("hex")}`;
  const block = {
    number: hex(number), hash, parentHash, timestamp: hex(Math.floor(Date.now() / 1000)), gasLimit: hex(11500000), gasUsed: "0x0",
    baseFeePerGas: "0x7", miner: `0x${"0".repeat(40)}`, difficulty: "0x0", extraData: "0x", nonce: "0x0000000000000000",
    transactions: [], uncles: [], withdrawals: [],
  };
  blocks.push(block);
  for (const notify of heads) notify(block);
}
seal();
if (period > 0) setInterval(seal, period * 1000).unref();

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function blockAt(tag) {
  if (tag === "latest" || tag === "safe" || tag === "finalized" || tag === "pending" || tag === undefined) return blocks[blocks.length - 1];
  if (tag === "earliest") return blocks[0];
  return blocks[Number.parseInt(String(tag), 16)] || null;
}

function call(method, params, allowed, socket) {
  if (!allowed.has(String(method).split("_")[0])) throw new RpcError(-32601, `the method ${method} does not exist/is not available`);
  switch (method) {
    case "eth_chainId": return hex(CHAIN_ID);
    case "net_version": return String(CHAIN_ID);
    case "net_listening": return false;
    case "net_peerCount": return "0x0";
    case "web3_clientVersion": return "Geth/v1.17.3-stable-standin/linux-amd64/go1.24";
    case "eth_blockNumber": return hex(blocks.length - 1);
    case "eth_syncing": return false;
    case "eth_gasPrice": return "0x7";
    case "eth_getBalance": return "0x0";
    case "eth_getBlockByNumber": return blockAt(params[0]);
    case "eth_getBlockByHash": return blocks.find((b) => b.hash === params[0]) || null;
    case "eth_subscribe": {
      if (!socket || params[0] !== "newHeads") throw new RpcError(-32601, "notifications not supported");
      const id = hex(crypto.randomInt(1, 2 ** 31));
      const notify = (b) => socket.send(JSON.stringify({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: id, result: b } }));
      heads.add(notify);
      socket.on("close", () => heads.delete(notify));
      return id;
    }
    default: throw new RpcError(-32601, `the method ${method} does not exist/is not available`);
  }
}

function reply(text, allowed, socket) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } };
  }
  const one = (m) => {
    try {
      return { jsonrpc: "2.0", id: m.id, result: call(m.method, Array.isArray(m.params) ? m.params : [], allowed, socket) };
    } catch (e) {
      if (!(e instanceof RpcError)) throw e;
      return { jsonrpc: "2.0", id: m.id, error: { code: e.code, message: e.message } };
    }
  };
  return Array.isArray(msg) ? msg.map(one) : one(msg);
}

const apis = (flag) => new Set(String(flags.get(flag) || "eth,net,web3").split(","));
const listen = (server, addrFlag, portFlag, fallback, what) =>
  server.listen(Number(flags.get(portFlag) || fallback), String(flags.get(addrFlag) || "127.0.0.1"), () =>
    process.stdout.write(`INFO HTTP server started  ${what}=${server.address().address}:${server.address().port}\n`),
  );

if (flags.has("http")) {
  const allowed = apis("http.api");
  const server = http.createServer((req, res) => {
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(reply(body, allowed))));
  });
  listen(server, "http.addr", "http.port", 8545, "endpoint");
}
if (flags.has("ws")) {
  const allowed = apis("ws.api");
  const server = http.createServer((_req, res) => res.writeHead(400).end());
  new WebSocketServer({ server }).on("connection", (ws) => ws.on("message", (d) => ws.send(JSON.stringify(reply(d.toString(), allowed, ws)))));
  listen(server, "ws.addr", "ws.port", 8546, "ws endpoint");
}
if (flags.has("metrics")) {
  const server = http.createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/plain" }).end(`chain_head_block ${blocks.length - 1}\n`));
  listen(server, "metrics.addr", "metrics.port", 6060, "metrics");
}
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
