#!/usr/bin/env node
// Stands in for geth (ethereum/client-go) in the fault run: takes geth's command line as the
// package writes it (flags checked against the fixture), serves a replica of the chain every geth
// replica of the run follows (replica.js) as JSON-RPC on --http.port and WebSocket on --ws.port,
// and the engine API on --authrpc.port behind the JWT of --authrpc.jwtsecret (what the Lighthouse
// stand-in calls). It does not prove that geth syncs, peers, or executes transactions.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const { die, parseFlags, jsonRpcListener, rpcError, exitOnSignals, http } = require("./lib.js");
const { replica, evmHandler, attachWs, rpcServer, listen } = require("./replica.js");

const f = parseFlags("geth", process.argv.slice(2), new Set(["mainnet", "sepolia", "holesky", "http", "ws", "metrics"]));
const chainId = f.has("mainnet") ? 1 : f.has("sepolia") ? 11155111 : die("geth", "no network flag (--mainnet or --sepolia)");
const jwtFile = f.get("authrpc.jwtsecret") || die("geth", "--authrpc.jwtsecret is required by the stand-in");
let jwt;
try {
  jwt = Buffer.from(fs.readFileSync(jwtFile, "utf8").trim().replace(/^0x/, ""), "hex");
} catch (e) {
  die("geth", `cannot read JWT secret ${jwtFile}: ${e.message}`);
}
if (jwt.length !== 32) die("geth", `invalid JWT secret in ${jwtFile}: want 32 bytes, got ${jwt.length}`);
exitOnSignals();

function verifyJwt(header) {
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(header || "");
  if (!m) return "missing token";
  if (crypto.createHmac("sha256", jwt).update(`${m[1]}.${m[2]}`).digest("base64url") !== m[3]) return "signature invalid";
  return Math.abs(Date.now() / 1000 - JSON.parse(Buffer.from(m[2], "base64url").toString()).iat) > 60 ? "stale token" : undefined;
}

const r = replica({ client: "geth", layer: "l1", chainId, dataDir: f.get("datadir") || "/root/.ethereum" });
const handle = evmHandler(r, chainId);
if (f.has("http")) listen(rpcServer(r, handle), f.get("http.addr") || "127.0.0.1", f.get("http.port") || 8545, "geth http");
if (f.has("ws")) {
  const server = http.createServer((_req, res) => res.writeHead(400).end());
  attachWs(server, handle);
  listen(server, f.get("ws.addr") || "127.0.0.1", f.get("ws.port") || 8546, "geth ws");
}
const engine = jsonRpcListener(async (method, params) => {
  if (method === "engine_exchangeCapabilities") return ["engine_newPayloadV3", "engine_forkchoiceUpdatedV3", "engine_getPayloadV3"];
  if (method.startsWith("eth_")) return handle(method, params);
  throw rpcError(-32601, `the method ${method} does not exist/is not available`);
});
listen(
  http.createServer((req, res) => {
    const why = verifyJwt(req.headers.authorization);
    if (why) return void res.writeHead(401, { "Content-Type": "text/plain" }).end(`${why}\n`);
    engine(req, res);
  }),
  f.get("authrpc.addr") || "127.0.0.1",
  f.get("authrpc.port") || 8551,
  "geth engine API",
);
if (f.has("metrics")) listen(http.createServer((_q, res) => res.writeHead(200).end(`chain_head_block ${r.state.head}\n`)), f.get("metrics.addr") || "127.0.0.1", f.get("metrics.port") || 6060, "geth metrics");
