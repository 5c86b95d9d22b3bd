/**
 * What the gateway costs on the request path. On loopback: a fixed-reply JSON-RPC upstream (so
 * the proxy, not the node, is measured) and real geth on the bench chain (bench/node.ts); the package's HAProxy
 * gateway (TLS) and, as references, nginx and Caddy with equivalent hand-written TLS configs.
 * wrk drives HTTP; a ws client drives WebSocket round trips. Cases alternate, figures are the
 * median of the rounds. Writes bench/results/latest.json and bench/results/latest.svg.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import { HAPROXY_ENVIRONMENT } from "../gateway/limits.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../devtools/gatewayFiles.js";
import { haproxyBinary } from "../devtools/haproxy.js";
import { freePort } from "../devtools/net.js";
import { startBenchNode } from "./node.js";
import { chart, type Figures } from "./chart.js";
import { ratio, show } from "./figures.js";
import { loadTool, median, withCpu, wrk as wrkFor, wsRoundTrips as wsFor, type Result } from "./measure.js";
import { BENCH_KEY as KEY, selfSignedCert, spawnHaproxy } from "./gateway.js";
import { startBadgeBench } from "./badges.js";
import { benchProcesses, runBench } from "./processes.js";
import { benchArgs } from "./args.js";
import { caddyfile, nginxConf } from "./proxies.js";
import { machine, partTimer } from "./machine.js";
import { printSpread, roundSpread } from "./rounds.js";

const ROOT = join(__dirname, "..");
const REPLY = '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}';

const args = benchArgs(process.argv.slice(2));
if (args.pin) loadTool.cpus = args.pin;
const SECONDS = args.seconds;
const WS_SECONDS = args["ws-seconds"];
const ROUNDS = args.rounds;
const CONNECTIONS = args.connections;
const PROXY_THREADS = args.threads;
const wrk = (url: string, seconds = SECONDS) => wrkFor(url, seconds, CONNECTIONS);
const wsRoundTrips = (url: string, seconds = WS_SECONDS) => wsFor(url, seconds, CONNECTIONS);

const procs = benchProcesses("rpcstack-bench");
const work = procs.work;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const startProc = (cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env) => procs.start(cmd, cmd, argv, env);

async function waitTcp(port: number) {
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`).then(() => true, (e) => e?.cause?.code !== "ECONNREFUSED");
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port}`);
}

async function main() {
  const part = partTimer();
  // Some of these print their version on stderr or exit non-zero after printing it.
  const version = (cmd: string, a: string[]) => {
    const r = spawnSync(cmd, a, { encoding: "utf8" });
    return `${r.stdout}${r.stderr}`.trim().split("\n")[0];
  };
  const versions = {
    node: process.version,
    haproxy: version(haproxyBinary(), ["-v"]),
    nginx: version("nginx", ["-v"]),
    caddy: version("caddy", ["version"]),
    wrk: version("wrk", ["--version"]),
  };

  // Upstreams: a fixed-reply HTTP server and a fixed-reply WebSocket server, in their own processes.
  const upPort = await freePort();
  const wsPort = await freePort();
  const upstream = startProc(process.execPath, [join(ROOT, "bench/upstream.js"), String(upPort), String(wsPort)]);
  await waitTcp(upPort);

  // One self-signed certificate for all three proxies.
  const { cert, key } = selfSignedCert(work);

  // The package's gateway, as generated, with loopback ports.
  const gwPort = await freePort();
  const gwOpts: GatewayOptions = {
    bindAddress: "127.0.0.1", httpsPort: gwPort, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() },
    certFile: join(work, "both.pem"), filesDir: join(work, "gw"), luaDir: PACKAGE_LUA_DIR, rateLimitPerSecond: 1_000_000, maxBodyBytes: 1 << 20,
    checkIntervalMs: 2000, caFile: "/etc/ssl/certs/ca-certificates.crt", threads: PROXY_THREADS, maxConnections: 4000,
    // The production limits, so the bench measures the policy too; wrk's connections all come from one address.
    ...GATEWAY_LIMIT_DEFAULTS, maxConnectionsPerAddress: 4000, wsMaxConnectionsPerKey: 4000,
  };
  const gw = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` } }], [{ name: "bench", key: KEY }], gwOpts);
  writeGatewayFiles(gwOpts.filesDir, gw);
  writeFileSync(join(work, "haproxy.cfg"), gw.config);
  const startHaproxy = (cfg: string) => {
    // The environment the gateway container has (services/gateway.ts).
    const p = spawnHaproxy(cfg, HAPROXY_ENVIRONMENT, cfg);
    procs.adopt(p);
    return p;
  };
  const hap = startHaproxy(join(work, "haproxy.cfg"));

  // Tuning: --variant '[["search","replace"],...]' runs a second gateway with the generated
  // config edited, measured in the same rounds as the unedited one (A/B in one run).
  let variant: { port: number; pid?: number } | undefined;
  if (args.variant) {
    const port = await freePort();
    let cfg = gw.config
      .replace(`:${gwPort} ssl`, `:${port} ssl`)
      .replace(`:${gwOpts.httpPort}\n`, `:${await freePort()}\n`)
      .replace(`:${gwOpts.metrics.port}\n`, `:${await freePort()}\n`);
    for (const [from, to] of args.variant) {
      if (!cfg.includes(from)) throw new Error(`--variant: "${from}" is not in the generated config`);
      cfg = cfg.replace(from, to);
    }
    writeFileSync(join(work, "haproxy-variant.cfg"), cfg);
    variant = { port, pid: startHaproxy(join(work, "haproxy-variant.cfg")).pid };
  }

  // Baselines: the same options through another checkout's builder (e.g. the config before a change).
  const baselines: Record<string, { port: number; pid?: number }> = {};
  for (const { name, dir } of args.baseline) {
    const { buildGateway: buildOther } = await import(join(dir, "gateway/build.ts"));
    const port = await freePort();
    // Its own Lua programs too, where it has them as files (gateway/lua/).
    const opts = { ...gwOpts, httpsPort: port, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() }, filesDir: join(work, `gw-${name}`), luaDir: join(dir, "gateway/lua") };
    const b = buildOther([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` } }], [{ name: "bench", key: KEY }], opts);
    writeGatewayFiles(opts.filesDir, b);
    writeFileSync(join(work, `haproxy-${name}.cfg`), b.config);
    baselines[name] = { port, pid: startHaproxy(join(work, `haproxy-${name}.cfg`)).pid };
  }

  // nginx and Caddy (bench/proxies.ts): the same key check and relays, written by hand.
  const ngPort = await freePort();
  const proxyFiles = { work, cert, key, projectKey: KEY, threads: PROXY_THREADS };
  writeFileSync(join(work, "nginx.conf"), nginxConf({ listen: ngPort, http: upPort, ws: wsPort }, proxyFiles));
  const nginx = startProc("nginx", ["-c", join(work, "nginx.conf"), "-e", "stderr"]);

  const cdPort = await freePort();
  writeFileSync(join(work, "Caddyfile"), caddyfile({ listen: cdPort, http: upPort, ws: wsPort }, proxyFiles));
  const caddy = startProc("caddy", ["run", "--config", join(work, "Caddyfile"), "--adapter", "caddyfile"], { ...process.env, XDG_DATA_HOME: work, XDG_CONFIG_HOME: work, HOME: work, GOMAXPROCS: String(Math.max(PROXY_THREADS, 1)) });
  await sleep(1500);

  const badges = await startBadgeBench(work, { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` }, PROXY_THREADS);
  procs.adopt(badges.proc);
  const path = `/gateway/eth/rpc-http/${KEY}`;
  const only = (cases: Record<string, string>) => (args.cases ? Object.fromEntries(Object.entries(cases).filter(([k]) => args.cases!.includes(k))) : cases);
  const httpCases: Record<string, string> = only({
    direct: `http://127.0.0.1:${upPort}/`,
    gateway: `https://127.0.0.1:${gwPort}${path}`,
    nginx: `https://127.0.0.1:${ngPort}${path}`,
    caddy: `https://127.0.0.1:${cdPort}${path}`,
    ...(variant ? { variant: `https://127.0.0.1:${variant.port}${path}` } : {}),
    ...Object.fromEntries(Object.entries(baselines).map(([n, b]) => [n, `https://127.0.0.1:${b.port}${path}`])),
    ...badges.http,
  });
  const wsPath = `/gateway/eth/rpc/${KEY}?secret=null`;
  const wsCases: Record<string, string> = only({
    direct: `ws://127.0.0.1:${wsPort}/`,
    gateway: `wss://127.0.0.1:${gwPort}${wsPath}`,
    nginx: `wss://127.0.0.1:${ngPort}${wsPath}`,
    caddy: `wss://127.0.0.1:${cdPort}${wsPath}`,
    ...(variant ? { variant: `wss://127.0.0.1:${variant.port}${wsPath}` } : {}),
    ...Object.fromEntries(Object.entries(baselines).map(([n, b]) => [n, `wss://127.0.0.1:${b.port}${wsPath}`])),
    ...badges.ws,
  });
  const groups: Record<string, number | undefined> = { direct: upstream.pid, gateway: hap.pid, nginx: nginx.pid, caddy: caddy.pid, variant: variant?.pid, "badge-key": badges.pid, badge: badges.pid, ...Object.fromEntries(Object.entries(baselines).map(([n, b]) => [n, b.pid])) };
  // Warm up and prove every case answers before measuring.
  for (const [name, url] of Object.entries(httpCases)) {
    try {
      wrk(url, 1);
    } catch (e) {
      throw new Error(`${name} does not answer: ${(e as Error).message}`);
    }
  }

  const http: Record<string, Result[]> = {};
  const ws: Record<string, Result[]> = {};
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate the order each round so drift does not favour one case.
    const order = Object.keys(httpCases);
    if (round % 2 === 0) order.reverse();
    for (const name of order) {
      (http[name] ??= []).push(await withCpu(groups[name], () => wrk(httpCases[name]), SECONDS));
      console.log(`round ${round} http ${name}: ${http[name].at(-1)!.rps} req/s`);
    }
    for (const name of order) {
      (ws[name] ??= []).push(await withCpu(groups[name], () => wsRoundTrips(wsCases[name]), WS_SECONDS));
      console.log(`round ${round} ws ${name}: ${ws[name].at(-1)!.rps} round trips/s`);
    }
  }
  if (args.cases) {
    // A partial run: medians only, against the first case; no results file.
    for (const [kind, all] of [["HTTP req/s", http], ["WS rt/s", ws]] as const) {
      const m = Object.entries(all).map(([k, v]) => [k, median(v)] as const);
      for (const [k, r] of m) console.log(`${kind} ${k.padEnd(10)} ${show(r.rps).padStart(7)} p50 ${show(r.p50ms)} p99 ${show(r.p99ms)} CPU ${show(r.cpuUsPerRequest)} us  x${show(ratio(r.rps, m[0][1].rps))}`);
    }
    printSpread(http, ws);
    return;
  }

  // A real EVM node behind the gateway, for scale: the node, not the proxy, bounds this one.
  const { node: evm } = await startBenchNode(procs, args["block-seconds"]);
  let evmFigures: { direct: Result; gateway: Result } | undefined;
  try {
    const gw2Port = await freePort();
    const gw2 = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: evm.url } }], [{ name: "bench", key: KEY }], { ...gwOpts, httpsPort: gw2Port, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() } });
    writeFileSync(join(work, "haproxy-evm.cfg"), gw2.config);
    startHaproxy(join(work, "haproxy-evm.cfg"));
    await sleep(800);
    evmFigures = { direct: wrk(evm.url, 5), gateway: wrk(`https://127.0.0.1:${gw2Port}${path}`, 5) };
  } finally {
    await evm.stop();
  }

  const H = Object.fromEntries(Object.entries(http).map(([k, v]) => [k, median(v)])) as Record<string, Result>;
  const W = Object.fromEntries(Object.entries(ws).map(([k, v]) => [k, median(v)])) as Record<string, Result>;
  const results = {
    date: new Date().toISOString(),
    machine: { ...machine(), ...versions },
    settings: { secondsPerCase: SECONDS, wsSecondsPerCase: WS_SECONDS, rounds: ROUNDS, connections: CONNECTIONS, proxyThreads: PROXY_THREADS, wrkThreads: 1, tls: "TLS 1.3, ECDSA P-256, keep-alive" },
    http: H,
    ws: W,
    evmNode: evmFigures,
    ratios: {
      gatewayOverDirect: ratio(H.gateway.rps, H.direct.rps),
      gatewayOverNginx: ratio(H.gateway.rps, H.nginx.rps),
      gatewayOverCaddy: ratio(H.gateway.rps, H.caddy.rps),
      cpuPerRequestGatewayOverNginx: ratio(H.gateway.cpuUsPerRequest ?? NaN, H.nginx.cpuUsPerRequest ?? NaN),
      ws: {
        gatewayOverDirect: ratio(W.gateway.rps, W.direct.rps),
        gatewayOverNginx: ratio(W.gateway.rps, W.nginx.rps),
        gatewayOverCaddy: ratio(W.gateway.rps, W.caddy.rps),
      },
    },
    spread: roundSpread(http, ws),
    parts: { relay: part.end() },
    raw: { http, ws },
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(join(args.out, "latest.json"), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(join(args.out, "latest.svg"), chart(H as Figures, W as Figures, results.date));

  const row = (name: string, r: Result, ref: Result) =>
    `| ${name.padEnd(8)} | ${show(r.rps).padStart(8)} | ${show(r.p50ms).padStart(7)} | ${show(r.p99ms).padStart(7)} | ${show(ratio(r.rps, ref.rps)).padStart(9)} | ${show(r.cpuUsPerRequest).padStart(10)} |`;
  console.log(`\nHTTP POST eth_blockNumber, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} rounds (median)\n`);
  console.log("| case     |    req/s | p50 ms  | p99 ms  | vs direct | CPU us/req |");
  console.log("| -------- | -------- | ------- | ------- | --------- | ---------- |");
  for (const k of Object.keys(H)) console.log(row(k, H[k], H.direct));
  console.log(`\nWebSocket round trips (one JSON-RPC message each), ${CONNECTIONS} connections, ${WS_SECONDS}s x ${ROUNDS} rounds\n`);
  console.log("| case     |   rt/s   | p50 ms  | p99 ms  | vs direct | CPU us/rt  |");
  console.log("| -------- | -------- | ------- | ------- | --------- | ---------- |");
  for (const k of Object.keys(W)) console.log(row(k, W[k], W.direct));
  console.log(`\nratios (HTTP req/s): gateway/direct ${results.ratios.gatewayOverDirect}, gateway/nginx ${results.ratios.gatewayOverNginx}, gateway/caddy ${results.ratios.gatewayOverCaddy}`);
  console.log(`ratios (WS round trips/s): gateway/direct ${results.ratios.ws.gatewayOverDirect}, gateway/nginx ${results.ratios.ws.gatewayOverNginx}, gateway/caddy ${results.ratios.ws.gatewayOverCaddy}`);
  printSpread(http, ws);
  if (evmFigures) console.log(`real EVM node (${evm.version}, eth_blockNumber): direct ${show(evmFigures.direct.rps)} req/s, through the gateway ${show(evmFigures.gateway.rps)} req/s`);
  console.log(`\nwrote ${join(args.out, "latest.json")} and latest.svg`);
}

runBench(procs, main);
