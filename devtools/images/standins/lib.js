// Shared by the stand-in clients: the real client's command-line rules (from a flag fixture)
// and small HTTP/JSON-RPC helpers. Plain JavaScript for Debian's Node 18, no build step.
"use strict";
const fs = require("fs");
const http = require("http");

/** Stops the process the way a real client does on a bad start: a loud line and exit 1. */
function die(client, message) {
  process.stderr.write(`${client}: FATAL: ${message}\n`);
  process.exit(1);
}

/**
 * Parses `--name=value`, `--name value` and `--flag` the way urfave/cli (geth, Juno's cobra) and
 * clap (Lighthouse) accept them, and refuses every name the fixture at RPCSTACK_STANDIN_FLAGS does
 * not list, as the real binary would. Without a fixture the check is not run and says so.
 */
function parseFlags(client, argv, booleans = new Set()) {
  const fixture = process.env.RPCSTACK_STANDIN_FLAGS;
  let known;
  if (fixture && fs.existsSync(fixture)) {
    const f = JSON.parse(fs.readFileSync(fixture, "utf8"));
    if (f.kind !== "flags") die(client, `${fixture} lists ${f.kind}, not command-line flags`);
    known = new Set(f.names);
  } else {
    process.stderr.write(`${client}: WARNING: no flag fixture at ${fixture || "(RPCSTACK_STANDIN_FLAGS unset)"}: flag names are NOT checked\n`);
  }
  const flags = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith("-")) die(client, `unexpected argument "${arg}"`);
    const body = arg.replace(/^--?/, "");
    const eq = body.indexOf("=");
    const name = eq >= 0 ? body.slice(0, eq) : body;
    let value = eq >= 0 ? body.slice(eq + 1) : undefined;
    if (value === undefined && !booleans.has(name) && i + 1 < argv.length && !argv[i + 1].startsWith("-")) value = argv[++i];
    if (known && !known.has(name)) die(client, `flag provided but not defined: -${name}`);
    flags.set(name, value === undefined ? true : value);
  }
  return flags;
}

/** The environment variables a client reads, checked against an env fixture (Pathfinder). */
function checkEnv(client, prefix) {
  const fixture = process.env.RPCSTACK_STANDIN_FLAGS;
  if (!fixture || !fs.existsSync(fixture)) {
    process.stderr.write(`${client}: WARNING: no env fixture: ${prefix}* names are NOT checked\n`);
    return;
  }
  const known = new Set(JSON.parse(fs.readFileSync(fixture, "utf8")).names);
  for (const k of Object.keys(process.env)) if (k.startsWith(prefix) && !known.has(k)) die(client, `unknown environment variable ${k}`);
}

/** A JSON-RPC 2.0 handler as an HTTP request listener (single and batch requests). */
function jsonRpcListener(handle, extraRoutes = () => false) {
  return (req, res) => {
    if (extraRoutes(req, res)) return;
    if (req.method !== "POST") return void res.writeHead(405).end();
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      let msg;
      try {
        msg = JSON.parse(body);
      } catch {
        return void res.writeHead(400, { "Content-Type": "application/json" }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
      }
      const at = (req.url || "/").split("?")[0];
      const reply = Array.isArray(msg) ? await Promise.all(msg.map((m) => answer(handle, m, at))) : await answer(handle, msg, at);
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(reply));
    });
  };
}

/** `at`: the request's path, which decides the spec version a Starknet node answers with. */
async function answer(handle, m, at) {
  try {
    return { jsonrpc: "2.0", id: m.id ?? null, result: await handle(m.method, m.params ?? [], at) };
  } catch (e) {
    return { jsonrpc: "2.0", id: m.id ?? null, error: { code: e.code ?? -32603, message: e.message } };
  }
}

const rpcError = (code, message) => Object.assign(new Error(message), { code });

function listen(server, host, port, what) {
  return new Promise((resolve) => {
    server.once("error", (e) => die(what, `listening on ${host}:${port}: ${e.message}`));
    server.listen(Number(port), host, () => {
      process.stdout.write(`${what} listening on ${host}:${port}\n`);
      resolve(server);
    });
  });
}

/** Ends on SIGTERM/SIGINT at once, as the clients do after flushing (nothing to flush here). */
function exitOnSignals(cleanup = () => {}) {
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => (cleanup(), process.exit(0)));
}

module.exports = { die, parseFlags, checkEnv, jsonRpcListener, rpcError, listen, exitOnSignals, http };
