#!/usr/bin/env node
// Stands in for geth (ethereum/client-go): takes geth's command line as the package writes it,
// refuses flags geth does not define (fixture), and serves a real EVM (hardhat, mining every
// second, chain id of --mainnet/--sepolia) as JSON-RPC on --http.port and WebSocket on --ws.port,
// limited to --http.api/--ws.api namespaces; the engine API on --authrpc.port checks the JWT from
// --authrpc.jwtsecret; writes a node key into --datadir once. It does not prove that geth syncs,
// peers, or that the pinned geth release accepts these flag values.
"use strict";
const { spawn } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const { WebSocketServer, WebSocket } = require("ws");
const { die, parseFlags, jsonRpcListener, rpcError, listen, exitOnSignals, http } = require("./lib.js");

const BOOLEAN = new Set(["mainnet", "sepolia", "holesky", "http", "ws", "metrics"]);
const f = parseFlags("geth", process.argv.slice(2), BOOLEAN);
const chainId = f.has("mainnet") ? 1 : f.has("sepolia") ? 11155111 : die("geth", "no network flag (--mainnet or --sepolia)");
const datadir = f.get("datadir") || "/root/.ethereum";
const INNER = 18545;

// A node key, written once like geth's: what a kept volume keeps.
fs.mkdirSync(path.join(datadir, "geth"), { recursive: true });
const nodekey = path.join(datadir, "geth", "nodekey");
if (!fs.existsSync(nodekey)) fs.writeFileSync(nodekey, crypto.randomBytes(32).toString("hex"), { mode: 0o600 });

const jwtFile = f.get("authrpc.jwtsecret");
if (!jwtFile) die("geth", "--authrpc.jwtsecret is required by the stand-in");
let jwtSecret;
try {
  jwtSecret = Buffer.from(fs.readFileSync(jwtFile, "utf8").trim().replace(/^0x/, ""), "hex");
} catch (e) {
  die("geth", `cannot read JWT secret ${jwtFile}: ${e.message}`);
}
if (jwtSecret.length !== 32) die("geth", `invalid JWT secret in ${jwtFile}: want 32 bytes, got ${jwtSecret.length}`);

const hardhat = spawn(process.execPath, [require.resolve("hardhat/internal/cli/cli.js"), "node", "--hostname", "127.0.0.1", "--port", String(INNER), "--config", path.join(__dirname, "hardhat.config.js")], {
  cwd: __dirname,
  env: { ...process.env, STANDIN_CHAIN_ID: String(chainId), HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" },
  stdio: ["ignore", "ignore", "inherit"],
});
hardhat.on("exit", (code) => die("geth", `the EVM (hardhat) exited with ${code}`));
exitOnSignals(() => hardhat.kill("SIGTERM"));

const apis = (flag) => new Set(String(f.get(flag) || "eth,net,web3").split(","));
const allowed = (set, method) => set.has(String(method).split("_")[0]);
const notAvailable = (method) => rpcError(-32601, `the method ${method} does not exist/is not available`);

async function inner(method, params) {
  const res = await fetch(`http://127.0.0.1:${INNER}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = await res.json();
  if (body.error) throw rpcError(body.error.code, body.error.message);
  return body.result;
}

function verifyJwt(header) {
  const m = /^Bearer ([\w-]+)\.([\w-]+)\.([\w-]+)$/.exec(header || "");
  if (!m) return "missing token";
  const sig = crypto.createHmac("sha256", jwtSecret).update(`${m[1]}.${m[2]}`).digest("base64url");
  if (sig !== m[3]) return "signature invalid";
  const iat = JSON.parse(Buffer.from(m[2], "base64url").toString()).iat;
  return Math.abs(Date.now() / 1000 - iat) > 60 ? "stale token" : undefined;
}

async function main() {
  for (let i = 0; ; i++) {
    try {
      await inner("eth_chainId", []);
      break;
    } catch {
      if (i > 600) die("geth", "the EVM (hardhat) did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if (f.has("http")) {
    const http_ = apis("http.api");
    await listen(http.createServer(jsonRpcListener((m, p) => (allowed(http_, m) ? inner(m, p) : Promise.reject(notAvailable(m))))), f.get("http.addr") || "127.0.0.1", f.get("http.port") || 8545, "geth http");
  }
  if (f.has("ws")) {
    const ws_ = apis("ws.api");
    const server = http.createServer((_req, res) => res.writeHead(400).end());
    new WebSocketServer({ server }).on("connection", (client) => {
      const up = new WebSocket(`ws://127.0.0.1:${INNER}`);
      const queue = [];
      up.on("open", () => queue.splice(0).forEach((d) => up.send(d)));
      up.on("message", (d) => client.send(d.toString()));
      up.on("close", () => client.close());
      up.on("error", () => client.close());
      client.on("message", (d) => {
        const text = d.toString();
        let msg;
        try {
          msg = JSON.parse(text);
        } catch {
          return client.send('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
        }
        if (!Array.isArray(msg) && !allowed(ws_, msg.method)) return client.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: notAvailable(msg.method).message } }));
        up.readyState === WebSocket.OPEN ? up.send(text) : queue.push(text);
      });
      client.on("close", () => up.close());
    });
    await listen(server, f.get("ws.addr") || "127.0.0.1", f.get("ws.port") || 8546, "geth ws");
  }
  const engine = jsonRpcListener(async (method, params) => {
    if (method === "engine_exchangeCapabilities") return ["engine_newPayloadV3", "engine_forkchoiceUpdatedV3", "engine_getPayloadV3"];
    if (method.startsWith("eth_")) return inner(method, params);
    throw notAvailable(method);
  });
  await listen(
    http.createServer((req, res) => {
      const why = verifyJwt(req.headers.authorization);
      if (why) return void res.writeHead(401, { "Content-Type": "text/plain" }).end(`${why}\n`);
      engine(req, res);
    }),
    f.get("authrpc.addr") || "127.0.0.1",
    f.get("authrpc.port") || 8551,
    "geth engine API",
  );
  if (f.has("metrics")) {
    await listen(http.createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/plain" }).end("chain_head_block 0\n")), f.get("metrics.addr") || "127.0.0.1", f.get("metrics.port") || 6060, "geth metrics");
  }
}
main();
