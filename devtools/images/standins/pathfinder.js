#!/usr/bin/env node
// Stands in for Pathfinder (swmansion/pathfinder): configured by PATHFINDER_* environment
// variables as the package sets them (names outside the env fixture are refused), checks over
// PATHFINDER_ETHEREUM_API_URL (WebSocket) that the L1 chain id matches PATHFINDER_NETWORK, writes
// its head into PATHFINDER_DATA_DIRECTORY as uid 1000, and serves Starknet JSON-RPC at / and
// /rpc/v0_6 to /rpc/v0_10, and WebSockets at /ws and /ws/rpc/v0_6 to /ws/rpc/v0_10, each answering
// starknet_specVersion as a real Pathfinder (v0.22.3, run here) does, on PATHFINDER_HTTP_RPC_ADDRESS,
// and /health, /ready, /ready/synced on PATHFINDER_MONITOR_ADDRESS. It models a synced node (a
// real one answers /ready/synced 503 until it is) and does not prove that Pathfinder syncs or verifies.
"use strict";
const { die, checkEnv, jsonRpcListener, listen, exitOnSignals, http } = require("./lib.js");
const { starknetNode, attachWs } = require("./starknet.js");

if (process.argv.length > 2) die("pathfinder", `unexpected arguments: ${process.argv.slice(2).join(" ")}`);
checkEnv("pathfinder", "PATHFINDER_");
const env = process.env;
const NETWORKS = { mainnet: "mainnet", "sepolia-testnet": "sepolia", "sepolia-integration": "sepolia-integration" };
// What each path answers to starknet_specVersion: / serves --rpc.root-version, v0_8 by default.
const VERSIONS = { v0_6: "0.6.0", v0_7: "0.7.1", v0_8: "0.8.1", v0_9: "0.9.0", v0_10: "0.10.2" };
const SPEC_VERSIONS = Object.fromEntries([
  ["/", VERSIONS.v0_8], ["/ws", VERSIONS.v0_8],
  ...Object.entries(VERSIONS).flatMap(([v, answer]) => [[`/rpc/${v}`, answer], [`/ws/rpc/${v}`, answer]]),
]);
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
    specVersions: SPEC_VERSIONS,
  });
  const rpcPath = (req) => { const p = (req.url || "").split("?")[0]; return p === "/" || p.startsWith("/rpc/") && p in SPEC_VERSIONS; };
  const rpc = http.createServer(jsonRpcListener(async (m, p, at) => handle(m, p, at), (req, res) => (rpcPath(req) ? false : (res.writeHead(404).end(), true))));
  if (env.PATHFINDER_WEBSOCKET_ENABLED === "true") attachWs(rpc, handle, Object.keys(SPEC_VERSIONS).filter((p) => p.startsWith("/ws")));
  const [rpcHost, rpcPort] = hostPort(env.PATHFINDER_HTTP_RPC_ADDRESS || "127.0.0.1:9545", "PATHFINDER_HTTP_RPC_ADDRESS");
  await listen(rpc, rpcHost, rpcPort, "pathfinder rpc");
  if (env.PATHFINDER_MONITOR_ADDRESS) {
    const [h, p] = hostPort(env.PATHFINDER_MONITOR_ADDRESS, "PATHFINDER_MONITOR_ADDRESS");
    const ok = new Set(["/health", "/ready", "/ready/synced", "/metrics"]);
    await listen(http.createServer((req, res) => res.writeHead(ok.has((req.url || "").split("?")[0]) ? 200 : 404).end()), h, p, "pathfinder monitor");
  }
}
main();
