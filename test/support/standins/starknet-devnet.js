#!/usr/bin/env node
// Stands in for Starknet Devnet (shardlabs/starknet-devnet-rs, entrypoint
// `tini -- starknet-devnet --host 0.0.0.0`): takes its command line as the package writes it,
// refuses option names the v0.8.1 binary does not define (crates/starknet-devnet/src/cli.rs), and
// serves what the devnet stack uses: JSON-RPC on POST / and /rpc, WebSocket JSON-RPC on /ws
// (with starknet_subscribeNewHeads), GET /is_alive, a genesis block 0 and, with
// --block-generation-on <seconds>, a new empty block every <seconds> stamped with the clock.
// It does not prove that the pinned image starts, executes transactions or has these accounts.
// Plain CommonJS for Node 18+, needs only `ws`; usable as a container's entrypoint or on loopback.
"use strict";
const crypto = require("crypto");
const http = require("http");
const { WebSocketServer } = require("ws");

const NAME = "starknet-devnet";
// Every option of starknet-devnet v0.8.1 (clap `long = ...` in crates/starknet-devnet/src/cli.rs).
const KNOWN = new Set([
  "accounts", "account-class", "account-class-custom", "predeclare-argent", "initial-balance", "seed", "host", "port",
  "start-time", "timeout", "gas-price", "gas-price-fri", "data-gas-price", "data-gas-price-fri", "l2-gas-price",
  "l2-gas-price-fri", "chain-id", "dump-on", "lite-mode", "proof-mode", "dump-path", "block-generation-on",
  "state-archive-capacity", "fork-network", "fork-block", "fork-upstream-caching", "restrictive-mode",
  "maximum-contract-class-size", "maximum-contract-bytecode-size", "maximum-sierra-length", "metrics-host", "metrics-port",
  "help", "version",
]);
const BOOLEAN = new Set(["lite-mode", "predeclare-argent", "help", "version"]);
// The chain id Devnet reports by default (--chain-id TESTNET): "SN_SEPOLIA" as a felt.
const SN_SEPOLIA = "0x534e5f5345504f4c4941";
const RPC_SPEC_VERSION = "0.10.2";

function die(message) {
  process.stderr.write(`${NAME}: error: ${message}\n`);
  process.exit(2);
}

function parse(argv) {
  const flags = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("--")) die(`unexpected argument '${arg}' found`);
    const body = arg.slice(2);
    const eq = body.indexOf("=");
    const name = eq >= 0 ? body.slice(0, eq) : body;
    if (!KNOWN.has(name)) die(`unexpected argument '--${name}' found`);
    let value = eq >= 0 ? body.slice(eq + 1) : undefined;
    if (value === undefined && !BOOLEAN.has(name)) {
      if (i + 1 >= argv.length) die(`a value is required for '--${name}'`);
      value = argv[++i];
    }
    // clap refuses a repeated option, as the entrypoint's --host and a second --host would be.
    if (flags.has(name)) die(`the argument '--${name}' cannot be used multiple times`);
    flags.set(name, value === undefined ? true : value);
  }
  return flags;
}

const flags = parse(process.argv.slice(2));
if (flags.has("help")) {
  process.stdout.write("A local testnet for Starknet (stand-in)\n");
  process.exit(0);
}
const host = String(flags.get("host") || "127.0.0.1");
const port = Number(flags.get("port") || 5050);
const generation = String(flags.get("block-generation-on") || "transaction");
let intervalSeconds;
if (/^[0-9]+$/.test(generation)) {
  intervalSeconds = Number(generation);
  if (intervalSeconds <= 0) die(`invalid value '${generation}' for '--block-generation-on'`);
} else if (generation !== "transaction" && generation !== "demand") {
  die(`invalid value '${generation}' for '--block-generation-on'`);
}

const felt = (n) => `0x${n.toString(16)}`;
const blocks = [];
function newBlock() {
  const number = blocks.length;
  const parent = number ? blocks[number - 1].block_hash : "0x0";
  const block_hash = `0x${crypto.createHash("sha256").update(`${parent}:${number}`).digest("hex").slice(0, 62)}`;
  const header = {
    status: "ACCEPTED_ON_L2",
    block_hash,
    parent_hash: parent,
    block_number: number,
    new_root: "0x0",
    timestamp: Math.floor(Date.now() / 1000),
    sequencer_address: "0x1000",
    l1_gas_price: { price_in_fri: felt(1e11), price_in_wei: felt(1e11) },
    l2_gas_price: { price_in_fri: felt(1e11), price_in_wei: felt(1e11) },
    l1_data_gas_price: { price_in_fri: felt(1e11), price_in_wei: felt(1e11) },
    l1_da_mode: "BLOB",
    starknet_version: "0.14.1",
  };
  blocks.push(header);
  for (const notify of subscribers.values()) notify(header);
  return header;
}
const subscribers = new Map();

class RpcError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function blockFor(id) {
  if (id === undefined || id === "latest" || id === "pre_confirmed" || id === "l1_accepted") return blocks[blocks.length - 1];
  if (id && typeof id === "object" && "block_number" in id) {
    const b = blocks[id.block_number];
    if (b) return b;
  }
  if (id && typeof id === "object" && "block_hash" in id) {
    const b = blocks.find((x) => x.block_hash === id.block_hash);
    if (b) return b;
  }
  throw new RpcError(24, "Block not found");
}

function call(method, params, socket) {
  const p = Array.isArray(params) ? params : params && typeof params === "object" ? Object.values(params) : [];
  switch (method) {
    case "starknet_specVersion": return RPC_SPEC_VERSION;
    case "starknet_chainId": return SN_SEPOLIA;
    case "starknet_syncing": return false; // Devnet's own answer, always (server/src/api/endpoints.rs).
    case "starknet_blockNumber": return blocks.length - 1;
    case "starknet_blockHashAndNumber": {
      const b = blocks[blocks.length - 1];
      return { block_hash: b.block_hash, block_number: b.block_number };
    }
    case "starknet_getBlockWithTxHashes": return { ...blockFor(p[0]), transactions: [] };
    case "starknet_getBlockWithTxs": return { ...blockFor(p[0]), transactions: [] };
    case "starknet_getBlockTransactionCount": return blockFor(p[0]) && 0;
    case "devnet_createBlock": return { block_hash: newBlock().block_hash };
    case "starknet_subscribeNewHeads": {
      if (!socket) throw new RpcError(-32601, "Method not found");
      const id = String(crypto.randomInt(1, 2 ** 31));
      subscribers.set(id, (header) => socket.send(JSON.stringify({ jsonrpc: "2.0", method: "starknet_subscriptionNewHeads", params: { subscription_id: id, result: header } })));
      socket.on("close", () => subscribers.delete(id));
      return id;
    }
    case "starknet_unsubscribe": return subscribers.delete(String(p[0]));
    default: throw new RpcError(-32601, "Method not found");
  }
}

function answer(msg, socket) {
  if (!msg || msg.jsonrpc !== "2.0" || typeof msg.method !== "string") return { jsonrpc: "2.0", id: msg && msg.id !== undefined ? msg.id : null, error: { code: -32600, message: "Invalid Request" } };
  try {
    return { jsonrpc: "2.0", id: msg.id, result: call(msg.method, msg.params, socket) };
  } catch (e) {
    if (!(e instanceof RpcError)) throw e;
    return { jsonrpc: "2.0", id: msg.id, error: { code: e.code, message: e.message } };
  }
}

function reply(text, socket) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } };
  }
  return Array.isArray(msg) ? msg.map((m) => answer(m, socket)) : answer(msg, socket);
}

const server = http.createServer((req, res) => {
  const path = (req.url || "").split("?")[0];
  if (req.method === "GET" && path === "/is_alive") return void res.writeHead(200, { "Content-Type": "text/plain" }).end("Alive!!!");
  if (req.method !== "POST" || (path !== "/" && path !== "/rpc")) return void res.writeHead(404).end();
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(reply(body))));
});
const wss = new WebSocketServer({ noServer: true });
server.on("upgrade", (req, sock, head) => {
  if ((req.url || "").split("?")[0] !== "/ws") return sock.destroy();
  wss.handleUpgrade(req, sock, head, (ws) => ws.on("message", (d) => ws.send(JSON.stringify(reply(d.toString(), ws)))));
});

newBlock();
// RPCSTACK_STANDIN_STALLED=1 (set by a test image, never by the package) keeps the chain at its
// genesis block: a node that never catches up, for the readiness timeout test.
if (intervalSeconds && process.env.RPCSTACK_STANDIN_STALLED !== "1") setInterval(newBlock, intervalSeconds * 1000).unref();
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
server.listen(port, host, () => process.stdout.write(`Starknet Devnet listening on ${host}:${server.address().port}\n`));
