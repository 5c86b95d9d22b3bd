/**
 * What reading WebSocket messages costs HAProxy, against the same HAProxy relaying them unread
 * (issue 38: at most 1.2x the CPU of the unfiltered relay). One run, one fixed-reply upstream,
 * several HAProxy processes from the one generated config, measured in alternating order:
 *   policy     the generated config (the ws_limit filter on the WebSocket backend)
 *   tunnel     the same config without the filter: the unfiltered relay
 *   noop-both  a Lua filter that reads nothing, called for each chunk both ways
 *   noop-req   the same, on the client's direction only
 *   native-both HAProxy's own trace filter (quiet), a C data filter both ways: what any data
 *              filter costs (the stream handles every read) before a Lua call is made
 *   <name>     the generated config with the Lua programs of another directory (--lua name=DIR)
 * native-both against tunnel is what a data filter costs; noop-both against native-both, what
 * HAProxy's Lua call itself costs (two a round trip, one each way).
 *
 *   npx tsx bench/wsFilter.ts --help   (bench/wsFilterArgs.ts)
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../devtools/gatewayFiles.js";
import { freePort } from "../devtools/net.js";
import WebSocket from "ws";
import { fig, showSpread, spread } from "./figures.js";
import { cpuMs } from "./measure.js";
import { BENCH_KEY, BENCH_MAX_BODY_BYTES, selfSignedCert, spawnHaproxy } from "./gateway.js";
import { benchProcesses, runBench } from "./processes.js";
import { parseWsFilterArgs, WS_FILTER_USAGE } from "./wsFilterArgs.js";

const parsed = parseWsFilterArgs(process.argv.slice(2));
if (parsed === "help") {
  console.log(WS_FILTER_USAGE);
  process.exit(0);
}
const missing = "error" in parsed ? [] : parsed.lua.filter((l) => !existsSync(l.dir)).map((l) => `--lua ${l.name}: no directory ${l.dir}`);
if ("error" in parsed || missing.length) {
  console.error(`bench/wsFilter.ts: ${"error" in parsed ? parsed.error : missing.join("; ")}\n${WS_FILTER_USAGE}`);
  process.exit(2);
}
const args = parsed;
const ROUNDS = args.rounds;
const SECONDS = args.seconds;
const CONNECTIONS = args.connections;
const REQUEST = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

// Filters that read nothing: what a Lua data filter costs before its own code runs.
const NOOP_LUA = `
local function noop(name, both)
  local F = { id = name, flags = filter.FLT_CFG_FL_HTX }
  F.__index = F
  function F:new() return setmetatable({}, F) end
  function F:start_analyze(txn, chn)
    if both or not chn:is_resp() then filter.register_data_filter(self, chn) end
  end
  function F:tcp_payload(txn, chn) return chn:input() end
  core.register_filter(name, F, function(f) return f end)
end
noop('ws_noop_both', true)
noop('ws_noop_req', false)
`;

const procs = benchProcesses("rpcstack-wsfilter");
const work = procs.work;

async function main() {
  const upPort = await freePort();
  const wsPort = await freePort();
  procs.start("upstream", process.execPath, [join(__dirname, "upstream.js"), String(upPort), String(wsPort)]);
  selfSignedCert(work);
  writeFileSync(join(work, "noop.lua"), NOOP_LUA);

  const cases: Record<string, { port: number; pid: number }> = {};
  const start = async (name: string, edit: (cfg: string) => string, luaDir = PACKAGE_LUA_DIR) => {
    const port = await freePort();
    const opts: GatewayOptions = {
      bindAddress: "127.0.0.1", httpsPort: port, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() },
      certFile: join(work, "both.pem"), filesDir: join(work, name), luaDir, rateLimitPerSecond: 1_000_000, maxBodyBytes: BENCH_MAX_BODY_BYTES,
      checkIntervalMs: 2000, caFile: "/etc/ssl/certs/ca-certificates.crt", threads: 1, maxConnections: 4000,
      ...GATEWAY_LIMIT_DEFAULTS, maxConnectionsPerAddress: 4000, wsMaxConnectionsPerKey: 4000,
    };
    const build = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` } }], [{ name: "bench", key: BENCH_KEY }], opts);
    writeGatewayFiles(opts.filesDir, build);
    const cfg = join(work, `${name}.cfg`);
    writeFileSync(cfg, edit(build.config));
    const p = spawnHaproxy(cfg, build.environment, name);
    procs.adopt(p);
    cases[name] = { port, pid: p.pid! };
  };
  const FILTER = /^(\s*)filter lua\.ws_limit .*$/m;
  const swap = (line: string) => (cfg: string) => {
    if (!FILTER.test(cfg)) throw new Error("the generated config has no ws_limit filter line");
    return cfg.replace(FILTER, line ? `$1${line}` : "").replace(/^(\s*lua-load .*limits\.lua)$/m, `$1\n    lua-load ${join(work, "noop.lua")}`);
  };
  await start("policy", (c) => c);
  await start("tunnel", swap(""));
  await start("noop-both", swap("filter lua.ws_noop_both"));
  await start("noop-req", swap("filter lua.ws_noop_req"));
  await start("native-both", swap("filter trace name native quiet"));
  for (const { name, dir } of args.lua) await start(name, (c) => c, dir);
  await new Promise((r) => setTimeout(r, 1500));

  const url = (port: number) => `wss://127.0.0.1:${port}/gateway/eth/rpc/${BENCH_KEY}?secret=null`;
  const names = Object.keys(cases).filter((n) => !args.cases || n === "tunnel" || args.cases.includes(n));
  // Every case's sockets stay open for the whole run (no handshake is measured), and the cases
  // take turns in short slices: the machine's other load falls on all of them alike.
  const sockets: Record<string, WebSocket[]> = {};
  for (const n of names) sockets[n] = await openSockets(url(cases[n].port), CONNECTIONS);
  for (const n of names) await roundTrips(sockets[n], 0.5);
  const runs: Record<string, { cpuUs: number; rt: number }[]> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 ? names : [...names].reverse();
    for (const n of order) {
      const before = cpuMs([cases[n].pid]);
      const rt = await roundTrips(sockets[n], SECONDS);
      (runs[n] ??= []).push({ cpuUs: (cpuMs([cases[n].pid]) - before) * 1000, rt });
    }
  }
  for (const n of names) for (const ws of sockets[n]) ws.terminate();
  const per = (r: { cpuUs: number; rt: number }) => r.cpuUs / r.rt;
  console.log(`\nHAProxy CPU per WebSocket round trip (eth_blockNumber, fixed reply), ${CONNECTIONS} sockets, ${ROUNDS} slices of ${SECONDS}s per case`);
  console.log("| case | CPU us/rt: median (min-max, spread) | over tunnel, per slice | all slices: CPU us/rt, over tunnel | rt/s |");
  console.log("| --- | --- | --- | --- | --- |");
  const total = (n: string) => runs[n].reduce((a, r) => a + r.cpuUs, 0) / runs[n].reduce((a, r) => a + r.rt, 0);
  for (const n of names) {
    const over = runs[n].map((r, i) => per(r) / per(runs.tunnel[i]));
    const rps = runs[n].reduce((a, r) => a + r.rt, 0) / (ROUNDS * SECONDS);
    console.log(`| ${n} | ${showSpread(spread(runs[n].map(per)))} | ${showSpread(spread(over))} | ${fig(total(n))}, ${fig(total(n) / total("tunnel"))} | ${fig(rps)} |`);
  }
}

async function openSockets(url: string, n: number): Promise<WebSocket[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const ws = new WebSocket(url, { rejectUnauthorized: false });
      await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
      return ws;
    }),
  );
}

/** Each socket sends one call and waits for its answer, in a loop, for `seconds`: the round trips made. */
async function roundTrips(sockets: WebSocket[], seconds: number): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    sockets.map(async (ws) => {
      while (Date.now() < deadline) {
        await new Promise<void>((r, j) => {
          ws.once("message", () => r());
          ws.send(REQUEST, (e) => e && j(e));
        });
        n++;
      }
    }),
  );
  return n;
}

runBench(procs, main);
