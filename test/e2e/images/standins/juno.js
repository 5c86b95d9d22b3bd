#!/usr/bin/env node
// Stands in for Juno (nethermind/juno): takes the package's command line, refuses flags Juno does
// not define (fixture), checks over --eth-node (WebSocket) that the L1 node's eth_chainId matches
// --network as Juno does, then serves Starknet JSON-RPC (chainId, blockNumber, syncing, blocks; a
// block every 2 s, head kept in --db-path) on --http-port and its WebSocket on --ws-port, with
// /live, /ready and /ready/sync. It does not prove that Juno syncs, verifies L1 state, or migrates.
"use strict";
const fs = require("fs");
const path = require("path");
const { WebSocketServer, WebSocket } = require("ws");
const { die, parseFlags, jsonRpcListener, rpcError, listen, exitOnSignals, http } = require("./lib.js");

const f = parseFlags("juno", process.argv.slice(2), new Set(["http", "ws", "metrics", "grpc", "pprof", "colour"]));
const NETWORKS = { mainnet: { l1: 1n, id: "0x534e5f4d41494e" }, sepolia: { l1: 11155111n, id: "0x534e5f5345504f4c4941" }, "sepolia-integration": { l1: 11155111n, id: "0x534e5f494e544547524154494f4e5f5345504f4c4941" } };
const net = NETWORKS[f.get("network") || "mainnet"] || die("juno", `unknown network ${f.get("network")}`);
const ethNode = String(f.get("eth-node") || die("juno", "--eth-node is required (ws:// or wss:// URL of an L1 node)"));
if (!/^wss?:\/\//.test(ethNode)) die("juno", `--eth-node must be a ws:// or wss:// URL (got ${ethNode})`);
const db = f.get("db-path") || die("juno", "--db-path is required by the stand-in");
fs.mkdirSync(db, { recursive: true });
const headFile = path.join(db, "standin-head");
let head = fs.existsSync(headFile) ? Number(fs.readFileSync(headFile, "utf8")) : 0;
exitOnSignals(() => fs.writeFileSync(headFile, String(head)));

function l1ChainId(attempt = 0) {
  return new Promise((resolve) => {
    const ws = new WebSocket(ethNode);
    const retry = (why) => {
      ws.terminate();
      if (attempt >= 60) die("juno", `cannot reach the L1 node at ${ethNode}: ${why}`);
      process.stderr.write(`juno: WARN L1 node not reachable yet (${why}); retrying\n`);
      setTimeout(() => resolve(l1ChainId(attempt + 1)), 1000);
    };
    ws.on("error", (e) => retry(e.message));
    ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })));
    ws.on("message", (d) => {
      const msg = JSON.parse(d.toString());
      ws.close();
      msg.result ? resolve(BigInt(msg.result)) : retry(JSON.stringify(msg.error));
    });
  });
}

const hash = (n) => `0x${(0x5a000000 + n).toString(16)}`;
const startedAt = Math.floor(Date.now() / 1000);
function handle(method, params) {
  switch (method) {
    case "starknet_chainId": return net.id;
    case "starknet_specVersion": return "0.8.1";
    case "starknet_blockNumber": return head;
    case "starknet_blockHashAndNumber": return { block_hash: hash(head), block_number: head };
    case "starknet_syncing": return false;
    case "starknet_getBlockWithTxHashes": {
      const id = params[0] ?? params.block_id;
      const n = typeof id === "object" && id && "block_number" in id ? id.block_number : head;
      if (n > head) throw rpcError(24, "Block not found");
      return { status: "ACCEPTED_ON_L2", block_hash: hash(n), block_number: n, timestamp: startedAt + 2 * n, transactions: [] };
    }
    default: throw rpcError(-32601, "Method not found");
  }
}

async function main() {
  const l1 = await l1ChainId();
  if (l1 !== net.l1) die("juno", `mismatched L1 and L2 networks: L1 chain id ${l1}, ${f.get("network")} needs ${net.l1}`);
  setInterval(() => fs.writeFileSync(headFile, String(++head)), 2000);
  const health = (req, res) => {
    const p = (req.url || "").split("?")[0];
    if (req.method === "GET" && ["/live", "/ready", "/ready/sync"].includes(p)) return res.writeHead(200).end(), true;
    return false;
  };
  if (f.has("http")) await listen(http.createServer(jsonRpcListener(async (m, p) => handle(m, p), health)), f.get("http-host") || "localhost", f.get("http-port") || 6060, "juno http");
  if (f.has("ws")) {
    const server = http.createServer((_req, res) => res.writeHead(400).end());
    new WebSocketServer({ server }).on("connection", (c) =>
      c.on("message", (d) => {
        let msg;
        try {
          msg = JSON.parse(d.toString());
          c.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: handle(msg.method, msg.params ?? []) }));
        } catch (e) {
          c.send(JSON.stringify({ jsonrpc: "2.0", id: msg?.id ?? null, error: { code: e.code ?? -32700, message: e.message } }));
        }
      }),
    );
    await listen(server, f.get("ws-host") || "localhost", f.get("ws-port") || 6061, "juno ws");
  }
  if (f.has("metrics")) await listen(http.createServer((_q, r) => r.writeHead(200).end(`juno_head ${head}\n`)), f.get("metrics-host") || "localhost", f.get("metrics-port") || 9090, "juno metrics");
}
main();
