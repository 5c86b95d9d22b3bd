#!/usr/bin/env node
// Stands in for Pathfinder (swmansion/pathfinder): configured by PATHFINDER_* environment
// variables as the package sets them (names outside the env fixture are refused), checks over
// PATHFINDER_ETHEREUM_API_URL (WebSocket) that the L1 chain id matches PATHFINDER_NETWORK, writes
// its head into PATHFINDER_DATA_DIRECTORY as uid 1000, and serves Starknet JSON-RPC at /rpc/v0_9
// and /rpc/v0_10 with the WebSocket at /ws/rpc/v0_10 (the stack's default spec version, where
// Pathfinder serves it) on PATHFINDER_HTTP_RPC_ADDRESS, and /health, /ready,
// /ready/synced on PATHFINDER_MONITOR_ADDRESS. It does not prove that Pathfinder syncs or verifies.
"use strict";
const { die, checkEnv, jsonRpcListener, listen, exitOnSignals, http } = require("./lib.js");
const { starknetNode, attachWs } = require("./starknet.js");

if (process.argv.length > 2) die("pathfinder", `unexpected arguments: ${process.argv.slice(2).join(" ")}`);
checkEnv("pathfinder", "PATHFINDER_");
const env = process.env;
const NETWORKS = { mainnet: "mainnet", "sepolia-testnet": "sepolia", "sepolia-integration": "sepolia-integration" };
const hostPort = (v, name) => {
  const m = /^(.+):(\d+)$/.exec(v || "");
  return m ? [m[1], Number(m[2])] : die("pathfinder", `${name} must be ADDRESS:PORT (got ${v})`);
};
exitOnSignals();

async function main() {
  const handle = await starknetNode({
    client: "pathfinder",
    network: NETWORKS[env.PATHFINDER_NETWORK] || die("pathfinder", `PATHFINDER_NETWORK must be one of ${Object.keys(NETWORKS).join(", ")} (got ${env.PATHFINDER_NETWORK})`),
    ethNode: env.PATHFINDER_ETHEREUM_API_URL,
    dataDir: env.PATHFINDER_DATA_DIRECTORY || "/usr/share/pathfinder/data",
  });
  const rpcPath = (req) => ["/", "/rpc/v0_9", "/rpc/v0_10"].includes((req.url || "").split("?")[0]);
  const rpc = http.createServer(jsonRpcListener(async (m, p) => handle(m, p), (req, res) => (rpcPath(req) ? false : (res.writeHead(404).end(), true))));
  if (env.PATHFINDER_WEBSOCKET_ENABLED === "true") attachWs(rpc, handle, "/ws/rpc/v0_10");
  const [rpcHost, rpcPort] = hostPort(env.PATHFINDER_HTTP_RPC_ADDRESS || "127.0.0.1:9545", "PATHFINDER_HTTP_RPC_ADDRESS");
  await listen(rpc, rpcHost, rpcPort, "pathfinder rpc");
  if (env.PATHFINDER_MONITOR_ADDRESS) {
    const [h, p] = hostPort(env.PATHFINDER_MONITOR_ADDRESS, "PATHFINDER_MONITOR_ADDRESS");
    const ok = new Set(["/health", "/ready", "/ready/synced", "/metrics"]);
    await listen(http.createServer((req, res) => res.writeHead(ok.has((req.url || "").split("?")[0]) ? 200 : 404).end()), h, p, "pathfinder monitor");
  }
}
main();
