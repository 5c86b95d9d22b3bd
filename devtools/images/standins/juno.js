#!/usr/bin/env node
// Stands in for Juno (nethermind/juno): takes the package's command line, refuses flags Juno does
// not define (fixture), checks over --eth-node (WebSocket) that the L1 node's eth_chainId matches
// --network as Juno does, then serves Starknet JSON-RPC (chainId, blockNumber, syncing, blocks; a
// block every 2 s, head kept in --db-path) on --http-port and its WebSocket on --ws-port, with
// /live, /ready and /ready/sync. It does not prove that Juno syncs, verifies L1 state, or migrates.
"use strict";
const { die, parseFlags, jsonRpcListener, listen, exitOnSignals, http } = require("./lib.js");
const { starknetNode, attachWs } = require("./starknet.js");

const f = parseFlags("juno", process.argv.slice(2), new Set(["http", "ws", "metrics", "grpc", "pprof", "colour"]));
exitOnSignals();

async function main() {
  const handle = await starknetNode({
    client: "juno",
    // Juno serves /v0_8, /v0_9, /v0_10 (and /rpc/v0_X) and its newest version at /, on both ports.
    // The patch numbers are not checked against a real Juno (none could be built here).
    specVersions: Object.fromEntries(Object.entries({ v0_8: "0.8.1", v0_9: "0.9.0", v0_10: "0.10.0" }).flatMap(([v, answer]) => [[`/${v}`, answer], [`/rpc/${v}`, answer]]).concat([["/", "0.10.0"]])),
    network: f.get("network") || "mainnet",
    ethNode: f.get("eth-node") || die("juno", "--eth-node is required (ws:// or wss:// URL of an L1 node)"),
    dataDir: f.get("db-path") || die("juno", "--db-path is required by the stand-in"),
  });
  const health = (req, res) => {
    const p = (req.url || "").split("?")[0];
    if (req.method === "GET" && ["/live", "/ready", "/ready/sync"].includes(p)) return res.writeHead(200).end(), true;
    return false;
  };
  if (f.has("http")) await listen(http.createServer(jsonRpcListener(async (m, p, at) => handle(m, p, at), health)), f.get("http-host") || "localhost", f.get("http-port") || 6060, "juno http");
  if (f.has("ws")) {
    const server = http.createServer((_req, res) => res.writeHead(400).end());
    attachWs(server, handle);
    await listen(server, f.get("ws-host") || "localhost", f.get("ws-port") || 6061, "juno ws");
  }
  if (f.has("metrics")) await listen(http.createServer((_q, r) => r.writeHead(200).end("juno_up 1\n")), f.get("metrics-host") || "localhost", f.get("metrics-port") || 9090, "juno metrics");
}
main();
