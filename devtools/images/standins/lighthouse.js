#!/usr/bin/env node
// Stands in for Lighthouse (sigp/lighthouse `lighthouse bn`): takes the package's command line,
// refuses flags Lighthouse does not define (fixture), reads the --execution-jwt secret and calls
// the execution client's engine API at --execution-endpoint with a signed JWT every 2 s, and
// serves /eth/v1/node/health (200 while the engine API answers, 503 otherwise) and
// /eth/v1/node/syncing on --http-port as a synced node would (a real Lighthouse that cannot sync
// answers 206 and is_syncing true, and exits at start when its checkpoint URL cannot be reached).
// It does not prove checkpoint sync, peering, or consensus.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const { die, parseFlags, listen, exitOnSignals, http } = require("./lib.js");

const argv = process.argv.slice(2);
if (argv[0] !== "bn" && argv[0] !== "beacon_node") die("lighthouse", `expected the bn subcommand, got "${argv[0]}"`);
const f = parseFlags("lighthouse", argv.slice(1), new Set(["http", "metrics", "staking", "disable-upnp"]));
if (!["mainnet", "sepolia", "holesky", "hoodi"].includes(f.get("network"))) die("lighthouse", `unknown --network ${f.get("network")}`);
const endpoint = f.get("execution-endpoint") || die("lighthouse", "--execution-endpoint is required");
const jwtFile = f.get("execution-jwt") || die("lighthouse", "--execution-jwt is required");
if (!String(f.get("checkpoint-sync-url") || "").startsWith("https://")) die("lighthouse", "checkpoint sync is required by default: give --checkpoint-sync-url");
let secret;
try {
  secret = Buffer.from(fs.readFileSync(jwtFile, "utf8").trim().replace(/^0x/, ""), "hex");
} catch (e) {
  die("lighthouse", `cannot read --execution-jwt ${jwtFile}: ${e.message}`);
}
exitOnSignals();

const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
function token() {
  const unsigned = `${b64({ alg: "HS256", typ: "JWT" })}.${b64({ iat: Math.floor(Date.now() / 1000) })}`;
  return `${unsigned}.${crypto.createHmac("sha256", secret).update(unsigned).digest("base64url")}`;
}

let elOnline = false;
let lastError = "not checked yet";
async function checkEngine() {
  try {
    const res = await fetch(endpoint, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token()}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "engine_exchangeCapabilities", params: [[]] }),
      signal: AbortSignal.timeout(3000),
    });
    elOnline = res.ok && Array.isArray((await res.json()).result);
    lastError = elOnline ? "" : `engine API answered ${res.status}`;
  } catch (e) {
    elOnline = false;
    lastError = e.message;
  }
  if (!elOnline) process.stderr.write(`lighthouse: WARN execution endpoint not usable: ${lastError}\n`);
}
checkEngine();
setInterval(checkEngine, 2000);

const json = (res, status, body) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
if (f.has("http")) {
  listen(
    http.createServer((req, res) => {
      const p = (req.url || "").split("?")[0];
      if (p === "/eth/v1/node/health") return void res.writeHead(elOnline ? 200 : 503).end();
      if (p === "/eth/v1/node/syncing") return json(res, 200, { data: { head_slot: "1", sync_distance: "0", is_syncing: false, is_optimistic: false, el_offline: !elOnline } });
      json(res, 404, { code: 404, message: "NOT_FOUND" });
    }),
    f.get("http-address") || "127.0.0.1",
    f.get("http-port") || 5052,
    "lighthouse http",
  );
}
if (f.has("metrics")) {
  listen(http.createServer((_req, res) => res.writeHead(200).end("beacon_head_slot 1\n")), f.get("metrics-address") || "127.0.0.1", f.get("metrics-port") || 5054, "lighthouse metrics");
}
