/**
 * What the gateway costs on the request path. On loopback: a fixed-reply JSON-RPC upstream (so
 * the proxy, not the node, is measured) and a real EVM node (hardhat); the package's HAProxy
 * gateway (TLS) and, as references, nginx and Caddy with equivalent hand-written TLS configs.
 * wrk drives HTTP; a ws client drives WebSocket round trips. Cases alternate, figures are the
 * median of the rounds. Writes bench/results/latest.json and bench/results/latest.svg.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import WebSocket, { WebSocketServer } from "ws";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import { HAPROXY_ENVIRONMENT } from "../gateway/limits.js";
import { writeGatewayFiles } from "../test/support/haproxy.js";
import { freePort } from "../test/support/net.js";
import { chart, type Figures } from "./chart.js";

const ROOT = join(__dirname, "..");
const KEY = "bench_key_0123456789abcdefghijklmnopqrstu";
const REPLY = '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}';
const REQUEST = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    "ws-seconds": { type: "string", default: "5" },
    rounds: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    threads: { type: "string", default: "1" },
    variant: { type: "string" },
    // name=DIR: the gateway builder of another checkout (DIR/gateway/build.ts), measured as its own case.
    baseline: { type: "string", multiple: true },
    // Only these cases (comma-separated), for quicker A/B runs.
    cases: { type: "string" },
    out: { type: "string", default: join(ROOT, "bench/results") },
  },
});
const SECONDS = Number(args.seconds);
const WS_SECONDS = Number(args["ws-seconds"]);
const ROUNDS = Number(args.rounds);
const CONNECTIONS = Number(args.connections);
const PROXY_THREADS = Number(args.threads);

const work = mkdtempSync(join(tmpdir(), "rpcstack-bench-"));
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startProc(cmd: string, argv: string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const p = spawn(cmd, argv, { stdio: ["ignore", "ignore", "pipe"], detached: true, env });
  let err = "";
  p.stderr!.on("data", (d) => (err += d));
  p.on("exit", (code) => code && code !== 0 && !stopping && console.error(`${cmd} exited ${code}: ${err.slice(-2000)}`));
  children.push(p);
  return p;
}

let stopping = false;
function stopAll() {
  stopping = true;
  for (const p of children) {
    try {
      process.kill(-p.pid!, "SIGTERM");
    } catch {}
  }
  rmSync(work, { recursive: true, force: true });
}
process.on("SIGINT", () => (stopAll(), process.exit(130)));


async function waitTcp(port: number) {
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/`).then(() => true, (e) => e?.cause?.code !== "ECONNREFUSED");
    if (ok) return;
    await sleep(50);
  }
  throw new Error(`nothing listens on ${port}`);
}

interface Result {
  rps: number;
  p50ms: number;
  p99ms: number;
  /** CPU time the proxy's processes spent per request, in microseconds (steadier than req/s on a shared machine). */
  cpuUsPerRequest?: number;
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || "100");

/** CPU milliseconds used so far by every process in a process group (a proxy and its workers). */
function groupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // the process ended while we looked
    }
  }
  return (ticks * 1000) / CLK_TCK;
}

/** Runs a measurement and adds the CPU the process group spent per request. */
async function withCpu(pgid: number | undefined, measure: () => Result | Promise<Result>, seconds: number): Promise<Result> {
  const before = pgid ? groupCpuMs(pgid) : 0;
  const r = await measure();
  if (!pgid) return r;
  const requests = r.rps * seconds;
  return { ...r, cpuUsPerRequest: Math.round(((groupCpuMs(pgid) - before) * 1000 * 10) / requests) / 10 };
}

const toMs = (v: string) => {
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) throw new Error(`wrk printed a latency it did not explain: ${v}`);
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
};

function wrk(url: string, seconds = SECONDS): Result {
  const out = execFileSync("wrk", ["-t1", `-c${CONNECTIONS}`, `-d${seconds}s`, "--latency", "-s", join(ROOT, "bench/post.lua"), url], { encoding: "utf8" });
  const grab = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`wrk could not measure ${url} (no ${re.source}):\n${out}`);
    return m[1];
  };
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (non2xx) throw new Error(`${url}: ${non2xx[1]} error responses:\n${out}`);
  return { rps: Number(grab(/Requests\/sec:\s+([\d.]+)/)), p50ms: toMs(grab(/^\s+50%\s+(\S+)/m)), p99ms: toMs(grab(/^\s+99%\s+(\S+)/m)) };
}

/** WebSocket round trips: each connection sends one JSON-RPC message and waits for its reply, in a loop. */
async function wsRoundTrips(url: string, seconds = WS_SECONDS): Promise<Result> {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const ws = new WebSocket(url, { rejectUnauthorized: false });
      await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
      while (Date.now() < deadline) {
        const t = process.hrtime.bigint();
        await new Promise<void>((r) => {
          ws.once("message", () => r());
          ws.send(REQUEST);
        });
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      ws.close();
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] * 1000) / 1000;
  return { rps: Math.round(latencies.length / seconds), p50ms: pct(50), p99ms: pct(99) };
}

const median = (xs: Result[]): Result => {
  const mid = (f: (r: Result) => number) => {
    const s = xs.map(f).sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const cpu = xs.every((r) => r.cpuUsPerRequest !== undefined) ? { cpuUsPerRequest: mid((r) => r.cpuUsPerRequest!) } : {};
  return { rps: Math.round(mid((r) => r.rps)), p50ms: mid((r) => r.p50ms), p99ms: mid((r) => r.p99ms), ...cpu };
};

async function main() {
  // Some of these print their version on stderr or exit non-zero after printing it.
  const version = (cmd: string, a: string[]) => {
    const r = spawnSync(cmd, a, { encoding: "utf8" });
    return `${r.stdout}${r.stderr}`.trim().split("\n")[0];
  };
  const versions = {
    node: process.version,
    haproxy: version("haproxy", ["-v"]),
    nginx: version("nginx", ["-v"]),
    caddy: version("caddy", ["version"]),
    wrk: version("wrk", ["--version"]),
  };

  // Upstreams: a fixed-reply HTTP server and a fixed-reply WebSocket server, in their own processes.
  const upPort = await freePort();
  const wsPort = await freePort();
  const upstream = startProc(process.execPath, [join(ROOT, "bench/upstream.js"), String(upPort), String(wsPort)]);
  await waitTcp(upPort);

  // One self-signed certificate for all three proxies (wrk does not verify).
  const cert = join(work, "cert.pem");
  const key = join(work, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], { stdio: "pipe" });
  writeFileSync(join(work, "both.pem"), execFileSync("cat", [cert, key]));

  // The package's gateway, as generated, with loopback ports.
  const gwPort = await freePort();
  const gwOpts: GatewayOptions = {
    bindAddress: "127.0.0.1", httpsPort: gwPort, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() },
    certFile: join(work, "both.pem"), filesDir: join(work, "gw"), rateLimitPerSecond: 1_000_000, maxBodyBytes: 1 << 20,
    checkIntervalMs: 2000, caFile: "/etc/ssl/certs/ca-certificates.crt", threads: PROXY_THREADS, maxConnections: 4000,
    // The production limits, so the bench measures the policy too; wrk's connections all come from one address.
    ...GATEWAY_LIMIT_DEFAULTS, maxConnectionsPerAddress: 4000, wsMaxConnectionsPerKey: 4000,
  };
  const gw = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` } }], [{ name: "bench", key: KEY }], gwOpts);
  writeGatewayFiles(gwOpts.filesDir, gw);
  writeFileSync(join(work, "haproxy.cfg"), gw.config);
  // The access log goes where a container's stdout goes: to a reader that keeps up.
  const startHaproxy = (cfg: string) => {
    // The environment the gateway container has (services/gateway.ts).
    const p = spawn("haproxy", ["-db", "-f", cfg], { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, ...HAPROXY_ENVIRONMENT } });
    p.stdout!.resume();
    p.stderr!.resume();
    children.push(p);
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
    for (const [from, to] of JSON.parse(args.variant) as [string, string][]) {
      if (!cfg.includes(from)) throw new Error(`--variant: "${from}" is not in the generated config`);
      cfg = cfg.replace(from, to);
    }
    writeFileSync(join(work, "haproxy-variant.cfg"), cfg);
    variant = { port, pid: startHaproxy(join(work, "haproxy-variant.cfg")).pid };
  }

  // Baselines: the same options through another checkout's builder (e.g. the config before a change).
  const baselines: Record<string, { port: number; pid?: number }> = {};
  for (const spec of args.baseline ?? []) {
    const [name, dir] = spec.split("=");
    if (!name || !dir) throw new Error(`--baseline expects name=DIR, got "${spec}"`);
    const { buildGateway: buildOther } = await import(join(dir, "gateway/build.ts"));
    const port = await freePort();
    const opts = { ...gwOpts, httpsPort: port, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() }, filesDir: join(work, `gw-${name}`) };
    const b = buildOther([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${upPort}`, rpcWs: `ws://127.0.0.1:${wsPort}` } }], [{ name: "bench", key: KEY }], opts);
    writeGatewayFiles(opts.filesDir, b);
    writeFileSync(join(work, `haproxy-${name}.cfg`), b.config);
    baselines[name] = { port, pid: startHaproxy(join(work, `haproxy-${name}.cfg`)).pid };
  }

  // nginx: the same checks by hand: key via map, 401 otherwise, keep-alive to the upstream.
  const ngPort = await freePort();
  writeFileSync(join(work, "nginx.conf"), `
worker_processes ${PROXY_THREADS};
daemon off;
pid ${work}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log ${work}/nginx-access.log;
  client_body_temp_path ${work}/nginx-body; proxy_temp_path ${work}/nginx-proxy;
  fastcgi_temp_path ${work}/nginx-fcgi; uwsgi_temp_path ${work}/nginx-uwsgi; scgi_temp_path ${work}/nginx-scgi;
  map $key $key_ok { "${KEY}" 1; default 0; }
  upstream up { server 127.0.0.1:${upPort}; keepalive 64; }
  upstream upws { server 127.0.0.1:${wsPort}; }
  server {
    listen 127.0.0.1:${ngPort} ssl;
    ssl_certificate ${cert};
    ssl_certificate_key ${key};
    location ~ ^/gateway/eth/rpc-http/(?<key>[^/]+)$ {
      if ($key_ok = 0) { return 401; }
      rewrite ^ / break;
      proxy_pass http://up;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
    location ~ ^/gateway/eth/rpc/(?<key>[^/]+)$ {
      if ($key_ok = 0) { return 401; }
      rewrite ^ / break;
      proxy_pass http://upws;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
      proxy_read_timeout 1h;
    }
    location / { return 404; }
  }
}
`);
  const nginx = startProc("nginx", ["-c", join(work, "nginx.conf"), "-e", "stderr"]);

  // Caddy: path matchers with the key, 401 otherwise.
  const cdPort = await freePort();
  writeFileSync(join(work, "Caddyfile"), `{
  admin off
  auto_https off
  storage file_system ${work}/caddy
}
https://localhost:${cdPort}, https://127.0.0.1:${cdPort} {
  bind 127.0.0.1
  tls ${cert} ${key}
  log {
    output file ${work}/caddy-access.log
  }
  @rpc path /gateway/eth/rpc-http/${KEY}
  handle @rpc {
    rewrite * /
    reverse_proxy 127.0.0.1:${upPort}
  }
  @ws path /gateway/eth/rpc/${KEY}
  handle @ws {
    rewrite * /
    reverse_proxy 127.0.0.1:${wsPort}
  }
  handle {
    respond 401
  }
}
`);
  const caddy = startProc("caddy", ["run", "--config", join(work, "Caddyfile"), "--adapter", "caddyfile"], { ...process.env, XDG_DATA_HOME: work, XDG_CONFIG_HOME: work, HOME: work, GOMAXPROCS: String(Math.max(PROXY_THREADS, 1)) });
  await sleep(1500);

  const path = `/gateway/eth/rpc-http/${KEY}`;
  const only = (cases: Record<string, string>) => (args.cases ? Object.fromEntries(Object.entries(cases).filter(([k]) => args.cases!.split(",").includes(k))) : cases);
  const httpCases: Record<string, string> = only({
    direct: `http://127.0.0.1:${upPort}/`,
    gateway: `https://127.0.0.1:${gwPort}${path}`,
    nginx: `https://127.0.0.1:${ngPort}${path}`,
    caddy: `https://127.0.0.1:${cdPort}${path}`,
    ...(variant ? { variant: `https://127.0.0.1:${variant.port}${path}` } : {}),
    ...Object.fromEntries(Object.entries(baselines).map(([n, b]) => [n, `https://127.0.0.1:${b.port}${path}`])),
  });
  const wsPath = `/gateway/eth/rpc/${KEY}?secret=null`;
  const wsCases: Record<string, string> = only({
    direct: `ws://127.0.0.1:${wsPort}/`,
    gateway: `wss://127.0.0.1:${gwPort}${wsPath}`,
    nginx: `wss://127.0.0.1:${ngPort}${wsPath}`,
    caddy: `wss://127.0.0.1:${cdPort}${wsPath}`,
    ...(variant ? { variant: `wss://127.0.0.1:${variant.port}${wsPath}` } : {}),
    ...Object.fromEntries(Object.entries(baselines).map(([n, b]) => [n, `wss://127.0.0.1:${b.port}${wsPath}`])),
  });
  const groups: Record<string, number | undefined> = { direct: upstream.pid, gateway: hap.pid, nginx: nginx.pid, caddy: caddy.pid, variant: variant?.pid, ...Object.fromEntries(Object.entries(baselines).map(([n, b]) => [n, b.pid])) };
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
      for (const [k, r] of m) console.log(`${kind} ${k.padEnd(10)} ${String(r.rps).padStart(7)} p50 ${r.p50ms.toFixed(2)} p99 ${r.p99ms.toFixed(2)} CPU ${r.cpuUsPerRequest ?? "-"} us  x${(r.rps / m[0][1].rps).toFixed(3)}`);
    }
    return;
  }

  // A real EVM node behind the gateway, for scale: the node, not the proxy, bounds this one.
  const { startHardhat } = await import("../test/support/hardhat.js");
  const evm = await startHardhat();
  let evmFigures: { direct: Result; gateway: Result } | undefined;
  try {
    const gw2Port = await freePort();
    const gw2 = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: evm.url } }], [{ name: "bench", key: KEY }], { ...gwOpts, httpsPort: gw2Port, httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() } });
    writeFileSync(join(work, "haproxy-evm.cfg"), gw2.config);
    const h2 = spawn("haproxy", ["-db", "-f", join(work, "haproxy-evm.cfg")], { stdio: ["ignore", "pipe", "pipe"], detached: true });
    h2.stdout!.resume();
    h2.stderr!.resume();
    children.push(h2);
    await sleep(800);
    evmFigures = { direct: wrk(evm.url, 5), gateway: wrk(`https://127.0.0.1:${gw2Port}${path}`, 5) };
  } finally {
    await evm.stop();
  }

  const H = Object.fromEntries(Object.entries(http).map(([k, v]) => [k, median(v)])) as Record<string, Result>;
  const W = Object.fromEntries(Object.entries(ws).map(([k, v]) => [k, median(v)])) as Record<string, Result>;
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
  const results = {
    date: new Date().toISOString(),
    machine: { cores: cpus().length, cpu: cpus()[0]?.model, ...versions },
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
    raw: { http, ws },
  };
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(join(args.out!, "latest.json"), JSON.stringify(results, null, 2) + "\n");
  writeFileSync(join(args.out!, "latest.svg"), chart(H as Figures, W as Figures, results.date));

  const row = (name: string, r: Result, ref: Result) =>
    `| ${name.padEnd(8)} | ${String(r.rps).padStart(8)} | ${r.p50ms.toFixed(2).padStart(7)} | ${r.p99ms.toFixed(2).padStart(7)} | ${ratio(r.rps, ref.rps).toFixed(3).padStart(9)} | ${String(r.cpuUsPerRequest ?? "-").padStart(10)} |`;
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
  if (evmFigures) console.log(`real EVM node (hardhat): direct ${evmFigures.direct.rps} req/s, through the gateway ${evmFigures.gateway.rps} req/s`);
  console.log(`\nwrote ${join(args.out!, "latest.json")} and latest.svg`);
}

main()
  .then(() => (stopAll(), process.exit(0)))
  .catch((e) => {
    console.error(e);
    stopAll();
    process.exit(1);
  });
