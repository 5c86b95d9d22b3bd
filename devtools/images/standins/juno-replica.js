#!/usr/bin/env node
// Stands in for Juno (nethermind/juno) in the fault run: takes the package's command line (flags
// checked against the fixture), serves a replica of the Starknet chain every Juno replica of the
// run follows (replica.js) on --http-port and its WebSocket on --ws-port, with /live and
// /ready/sync (200 within 6 blocks of the head it last saw on the network, as Juno's own check
// counts). It does not check its L1 (--eth-node), nor prove that Juno syncs or verifies anything.
"use strict";
const { die, parseFlags, exitOnSignals, http } = require("./lib.js");
const { replica, starknetHandler, attachWs, rpcServer, listen } = require("./replica.js");

const CHAINS = { mainnet: "0x534e5f4d41494e", sepolia: "0x534e5f5345504f4c4941" };
const f = parseFlags("juno", process.argv.slice(2), new Set(["http", "ws", "metrics", "grpc", "pprof", "colour"]));
const chainId = CHAINS[f.get("network") || "mainnet"] || die("juno", `unknown network ${f.get("network")}`);
if (!/^wss?:\/\//.test(f.get("eth-node") || process.env.JUNO_ETH_NODE || "")) die("juno", "--eth-node must be a ws:// or wss:// URL");
exitOnSignals();

const r = replica({ client: "juno", layer: "l2", chainId, dataDir: f.get("db-path") || die("juno", "--db-path is required by the stand-in") });
const handle = starknetHandler(r, chainId);
const TOLERANCE = 6;
const health = (req, res) => {
  const p = (req.url || "").split("?")[0];
  if (req.method !== "GET") return false;
  if (p === "/live") return res.writeHead(200).end(), true;
  if (p === "/ready" || p === "/ready/sync") {
    const s = r.state;
    const ok = s.sourceHead !== undefined && s.sourceHead - s.head <= TOLERANCE;
    return res.writeHead(ok ? 200 : 503).end(), true;
  }
  return false;
};
if (f.has("http")) listen(rpcServer(r, handle, health), f.get("http-host") || "localhost", f.get("http-port") || 6060, "juno http");
if (f.has("ws")) {
  const server = http.createServer((_req, res) => res.writeHead(400).end());
  attachWs(server, handle);
  listen(server, f.get("ws-host") || "localhost", f.get("ws-port") || 6061, "juno ws");
}
if (f.has("metrics")) listen(http.createServer((_q, res) => res.writeHead(200).end(`juno_head ${r.state.head}\n`)), f.get("metrics-host") || "localhost", f.get("metrics-port") || 9090, "juno metrics");
