/**
 * Instructions per request, counted by valgrind's callgrind (issue 52, items 2 and 4). Unlike CPU
 * time, the count does not move with whatever else the machine runs (the same program, inputs and
 * environment give the same count), so cases compare across runs and on a busy machine. It counts
 * the proxy's own user-space instructions only: the kernel's work for TCP and TLS records, about
 * the same for every case of one transport, is not in it, so these ratios are larger than the CPU
 * ratios of the same cases.
 *
 * Each case runs alone under callgrind (about 50 times slower), warmed, then counted per call
 * (see count: handshakes left out) with `--connections` kept-alive TLS connections:
 * - the relay part's comparison: a relay of eth_blockNumber by the generated gateway, by nginx with
 *   the same key check (bench/proxies.ts), by the gateway with its route part scoped to the call's
 *   route (bench/scope.ts: the bound of evaluating only the rules that apply), and by the gateway
 *   with no frontend rule at all (HAProxy's own cost of a relay);
 * - the hit part's cases (bench/hitCases.ts): a native return, a hit, a relay, and the steps of a
 *   hit between.
 * Adds `instructions` to bench/results/latest.json.
 *
 *   npx tsx bench/instructions.ts [--seconds N] [--connections N] [--out DIR]   (the bench's one option list)
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../devtools/net.js";
import { BENCH_DEFAULTS, BENCH_USAGE, benchArgs } from "./args.js";
import { callgrindCommand, callgrindTotal } from "./callgrind.js";
import { ratio, show } from "./figures.js";
import { BENCH_KEY, selfSignedCert, startBenchGateway, type BenchGatewayOptions } from "./gateway.js";
import { HIT_CALL, HIT_CASES, hitCallScript, hitCases } from "./hitCases.js";
import { machine, partTimer } from "./machine.js";
import { loadTool, metricSum, scrape, wrk } from "./measure.js";
import { benchProcesses, runBench } from "./processes.js";
import { nginxConf } from "./proxies.js";
import { bareRelay, routeKnown, scopeToRoute } from "./scope.js";

const ROOT = join(__dirname, "..");
// Under callgrind a case answers a few hundred calls a second: fewer connections, a few seconds.
const args = benchArgs(process.argv.slice(2), BENCH_USAGE, { ...BENCH_DEFAULTS, seconds: 3, connections: 8 });
if (args.pin) loadTool.cpus = args.pin;
const procs = benchProcesses("rpcstack-bench-instructions");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The short load whose count is taken from the long one's (see count). */
const SHORT_SECONDS = 1;

interface Counted {
  /** The calls and instructions the long load had over the short one. */
  readonly requests: number;
  readonly instructions: number;
  readonly perRequest: number;
  /** Every call of both loads. */
  readonly calls: number;
}

/** Waits until `url` answers 200 to `body` (a program under callgrind starts slowly). */
async function answers(url: string, body: string, name: string): Promise<void> {
  for (let i = 0; i < 240; i++) {
    const code = spawnSync("curl", ["-sk", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/json", "--data", body, url], { encoding: "utf8" }).stdout;
    if (code === "200") return;
    await sleep(250);
  }
  throw new Error(`${name} did not answer 200 under callgrind within 60 s`);
}

/**
 * Counts the instructions of `pid` (under callgrind) per call: two wrk loads of `url`, a short one
 * and one of `--seconds`, each on connections of its own; the difference between them over the
 * difference in calls. wrk opens its connections anew each time, and a TLS handshake costs about
 * as much as ten calls: counted over one load, the handshakes weigh on the figure by how many
 * calls the load had, which a busy machine changes. The difference leaves them (and the start of
 * each load) out.
 */
function count(work: string, name: string, pid: number, url: string, script: string): Counted {
  const load = (seconds: number) => {
    execFileSync("callgrind_control", ["-z", String(pid)], { stdio: "ignore" });
    const r = wrk(url, seconds, args.connections, script);
    execFileSync("callgrind_control", ["-d", String(pid)], { stdio: "ignore" });
    // Each dump is the next number: cg-<name>.<pid>.<n>.
    const dumps = readdirSync(work).filter((f) => f.startsWith(`cg-${name}.${pid}.`)).sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
    if (!dumps.length) throw new Error(`${name}: callgrind wrote no dump`);
    return { requests: r.requests!, instructions: callgrindTotal(readFileSync(join(work, dumps.at(-1)!), "utf8")) };
  };
  wrk(url, 1, args.connections, script);
  const short = load(SHORT_SECONDS);
  const long = load(args.seconds);
  if (long.requests <= short.requests) throw new Error(`${name}: the ${args.seconds} s load had no more calls (${long.requests}) than the ${SHORT_SECONDS} s one (${short.requests}): give --seconds more than ${SHORT_SECONDS}`);
  const requests = long.requests - short.requests;
  const instructions = long.instructions - short.instructions;
  return { requests, instructions, perRequest: Math.round(instructions / requests), calls: short.requests + long.requests };
}

async function main() {
  const part = partTimer();
  const work = procs.work;
  const { cert, key } = selfSignedCert(work);
  const [http, ws] = [await freePort(), await freePort()];
  // Block answers for the cache's polls (the hit cases); eth_blockNumber and eth_chainId get the fixed reply.
  procs.start("the fixed-reply upstream (bench/upstream.js)", process.execPath, [join(ROOT, "bench/upstream.js"), String(http), String(ws), "blocks"]);
  await sleep(500);
  const upstream = `http://127.0.0.1:${http}`;
  const post = join(ROOT, "bench/post.lua");
  const chainId = hitCallScript(work);
  const BLOCK_NUMBER = readFileSync(post, "utf8").match(/wrk\.body = '([^']+)'/)![1];
  const path = `/gateway/eth/rpc-http/${BENCH_KEY}`;
  const counted: Record<string, Counted> = {};

  /** One gateway case under callgrind; `hits`: every counted call must be a cache hit. */
  const gateway = async (name: string, o: BenchGatewayOptions, script: string, body: string, hits = false) => {
    const file = name.replace(/\W/g, "-");
    const gw = await startBenchGateway({ ...o, name: `cg-${file}`, wrap: callgrindCommand(work, file) });
    procs.adopt(gw.proc);
    try {
      await answers(`${gw.origin}${path}`, body, name);
      const before = hits ? await hitsOf(gw.metricsPort) : 0;
      counted[name] = count(work, file, gw.pid, `${gw.origin}${path}`, script);
      if (hits) {
        const held = (await hitsOf(gw.metricsPort)) - before;
        if (held < counted[name].calls * 0.99) throw new Error(`${name}: ${held} of the ${counted[name].calls} calls counted were hits`);
      }
      console.log(`instructions ${name}: ${show(counted[name].perRequest)} per request (${counted[name].requests} requests)`);
    } finally {
      gw.proc.kill("SIGTERM");
      await new Promise((r) => gw.proc.once("exit", r));
    }
  };
  const hitsOf = async (port: number) => metricSum(await scrape(`http://127.0.0.1:${port}/metrics/cache`), "rpcstack_cache_hits_total");

  // The relay: nginx, the gateway, scoped, bare.
  const ngPort = await freePort();
  const conf = nginxConf({ listen: ngPort, http, ws }, { work, cert, key, projectKey: BENCH_KEY, threads: 1 }).replace("daemon off;", "daemon off;\nmaster_process off;");
  writeFileSync(join(work, "nginx.conf"), conf);
  const [vg, ...vgArgs] = callgrindCommand(work, "nginx");
  const nginx = procs.start("nginx under callgrind", vg, [...vgArgs, "nginx", "-c", join(work, "nginx.conf"), "-e", "stderr"]);
  await answers(`https://127.0.0.1:${ngPort}${path}`, BLOCK_NUMBER, "nginx");
  counted.nginx = count(work, "nginx", nginx.pid!, `https://127.0.0.1:${ngPort}${path}`, post);
  console.log(`instructions nginx: ${show(counted.nginx.perRequest)} per request (${counted.nginx.requests} requests)`);
  nginx.kill("SIGTERM");

  const relayChain = { path: "eth", chainId: "ETH1", kind: "evm" as const, upstreams: { rpcHttp: upstream, rpcWs: `ws://127.0.0.1:${ws}` } };
  const relay: BenchGatewayOptions = { work, name: "gateway", chains: [relayChain], threads: 1 };
  const known = routeKnown({ chain: "eth", iface: "rpc-http", method: "METH_POST", noQuota: true }, ["eth"]);
  let removed = 0;
  await gateway("gateway", relay, post, BLOCK_NUMBER);
  await gateway("gateway-scoped", { ...relay, edit: (c) => ((r) => ((removed = r.removed), r.config))(scopeToRoute(c, known)) }, post, BLOCK_NUMBER);
  await gateway("gateway-bare", { ...relay, edit: (c) => bareRelay(c, "be_eth_rpc") }, post, BLOCK_NUMBER);

  // The hit part's cases.
  const hc = hitCases(work, upstream, 1);
  for (const name of HIT_CASES) await gateway(name, hc[name], chainId, HIT_CALL, name === "hit");

  const per = (a: string, b: string) => ratio(counted[a].perRequest, counted[b].perRequest);
  const ratios = {
    gatewayOverNginx: per("gateway", "nginx"),
    scopedOverNginx: per("gateway-scoped", "nginx"),
    bareOverNginx: per("gateway-bare", "nginx"),
    scopedOverGateway: per("gateway-scoped", "gateway"),
    hitOverReturn: per("hit", "return"),
    relayOverReturn: per("relay", "return"),
    rulesReturnOverReturn: per("rules+return", "return"),
    luaReturnOverReturn: per("lua+return", "return"),
    luaDoneOverReturn: per("lua+done", "return"),
  };
  const version = spawnSync("valgrind", ["--version"], { encoding: "utf8" }).stdout.trim();
  const file = join(args.out, "latest.json");
  const results = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { date: new Date().toISOString() };
  results.machine = { ...results.machine, ...machine() };
  results.parts = { ...results.parts, instructions: part.end() };
  results.instructions = { tool: version, seconds: args.seconds, connections: args.connections, scopedRulesRemoved: removed, cases: counted, ratios };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + "\n");

  console.log(`\nInstructions per request (${version} callgrind, user space only), ${args.connections} TLS connections: a ${args.seconds} s load's count less a ${SHORT_SECONDS} s one's, over the calls between them`);
  for (const [k, c] of Object.entries(counted)) console.log(`  ${k.padEnd(15)} ${show(c.perRequest).padStart(9)}`);
  console.log(`  relay: gateway/nginx ${ratios.gatewayOverNginx}; scoped/nginx ${ratios.scopedOverNginx} (${removed} rules taken out of its route part; scoped/gateway ${ratios.scopedOverGateway}); bare/nginx ${ratios.bareOverNginx}`);
  console.log(`  hit: hit/return ${ratios.hitOverReturn}; relay/return ${ratios.relayOverReturn}; rules+return/return ${ratios.rulesReturnOverReturn}; lua+return/return ${ratios.luaReturnOverReturn}; lua+done/return ${ratios.luaDoneOverReturn}`);
  console.log(`wrote instructions into ${file}`);
}

runBench(procs, main);
