/**
 * The gateway against the gateways an operator would pick instead, eRPC and Optimism's proxyd, in
 * front of the same node (real geth on the bench chain: bench/node.ts), in one run:
 * (a) the read mix (bench/mixes.ts), ids varying; (b) a relay-only mix no cache may answer;
 * (c) WebSocket round trips where the peer has WebSocket (proxyd). TLS where the peer terminates
 * TLS (eRPC, against the gateway's TLS listener); plain HTTP where it cannot (proxyd, against the
 * gateway's generated config with a plain listener). Per case: req/s, p50/p99, CPU per request of
 * the proxy's own process, hit ratio where there is a cache, and the gateway over the peer, round
 * by round. Then each proxy's answers are checked against the node's (ids, final blocks, `latest`).
 * Adds `ratios.peers` and `peers` to bench/results/latest.json and writes bench/results/peers.svg.
 *
 * `npm run bench -- --cases peers`; `--help` lists the options.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { CACHE_BUDGET_BYTES } from "../config/tiers.js";
import { freePort } from "../devtools/net.js";
import { BENCH_DEFAULTS, benchArgs, parseBenchArgs } from "./args.js";
import { barChart, COLORS } from "./chart.js";
import { fig, show, showSpread, spread, type Spread } from "./figures.js";
import { BENCH_KEY as KEY, selfSignedCert, startBenchGateway } from "./gateway.js";
import { groupCpuMs, loadTool, median, metricSum, scrape, warmUp, withCpu, wrk, wsRoundTrips, type Result } from "./measure.js";
import { laps, machine, partTimer } from "./machine.js";
import { readMixLua, relayMixLua, warmMixCalls, warmMixLua } from "./mixes.js";
import { startBenchNode } from "./node.js";
import { benchProcesses, runBench } from "./processes.js";
import { driftLines } from "./rounds.js";
import { binaryVersion, PEER_RELEASES, peerBinary, type PeerName } from "./peers/build.js";
import { erpcConfig, erpcPath, proxydConfig, proxydPath, type PeerPolicy, type PeerUpstream } from "./peers/configs.js";
import { describe } from "./peers/correctness.js";
import { checkCorrectness, post, waitAnswers } from "./peers/probe.js";

const USAGE = `usage: npm run bench -- --cases peers [options]
  --seconds N        seconds per HTTP case and round (default ${BENCH_DEFAULTS.seconds})
  --ws-seconds N     seconds per WebSocket case and round (default ${BENCH_DEFAULTS["ws-seconds"]})
  --rounds N         rounds; cases alternate order each round (default 3; with --cases all, that run's 2)
  --connections N    wrk connections and WebSocket clients (default 32)
  --block-seconds N  the bench chain's new head every N s (default 12, mainnet's slot)
  --threads N        proxy threads (HAProxy nbthread, GOMAXPROCS of the peers; default 1)
  --pin CPUS         taskset CPU list for wrk (e.g. 1): the load tool keeps a core of its own
  --out DIR          results directory (default bench/results)
Peers: ${Object.values(PEER_RELEASES).map((r) => `${r.name} ${r.release} (built from ${r.module}@${r.version}, or ${r.env}=BINARY)`).join("; ")}`;

// The options are npm run bench's one list (bench/args.ts), with this bench's own usage and 3
// rounds when it runs alone; as a part of `--cases all` it takes that run's rounds (2 by default).
const argv = process.argv.slice(2);
const parsed = parseBenchArgs(argv);
const partOfAll = typeof parsed === "object" && "all" in parsed && parsed.all;
const args = benchArgs(argv, USAGE, { ...BENCH_DEFAULTS, rounds: partOfAll ? BENCH_DEFAULTS.rounds : 3 });
const SECONDS = args.seconds;
const WS_SECONDS = args["ws-seconds"];
const ROUNDS = args.rounds;
const CONNECTIONS = args.connections;
const THREADS = args.threads;
if (args.pin) loadTool.cpus = args.pin;

const procs = benchProcesses("rpcstack-bench-peers");
const work = procs.work;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Case {
  readonly name: string;
  /** The gateway listener this case is compared with (same transport), or none for the gateways and the node. */
  readonly against?: string;
  readonly transport: "TLS" | "plain";
  readonly http: string;
  readonly ws?: string;
  readonly pid: number;
  /** Cache hits so far, where the proxy has a cache. */
  readonly hits?: () => Promise<number>;
  /** Calls answered with another in-flight call's answer so far (eRPC's multiplexer). */
  readonly merged?: () => Promise<number>;
  readonly version: string;
}

interface MixResult extends Result {
  hitRatio?: number;
  /** CPU the node spent per request served through this case: what a proxy saves the node (a cache hit, merged calls). */
  nodeCpuUsPerRequest?: number;
  /** Share of requests answered by merging them into an identical call already in flight. */
  mergedRatio?: number;
}

async function main() {
  const part = partTimer();
  const time = laps();
  const resultsFile = join(args.out, "latest.json");
  const readResults = () => (existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, "utf8")) : { date: new Date().toISOString() });
  let bins: Record<PeerName, ReturnType<typeof peerBinary>>;
  try {
    bins = Object.fromEntries((Object.keys(PEER_RELEASES) as PeerName[]).map((n) => [n, peerBinary(PEER_RELEASES[n])])) as typeof bins;
  } catch (e) {
    if (!args.all) throw e;
    // In a run of every part, the parts before stay, and the file says why this one is missing.
    const results = readResults();
    results.parts = { ...results.parts, peers: part.end(`no peer binaries: ${(e as Error).message}`) };
    writeFileSync(resultsFile, JSON.stringify(results, null, 2) + "\n");
    console.error(`bench: the peers part is skipped (no eRPC and proxyd figures in this run): ${(e as Error).message}`);
    return;
  }
  const versions = Object.fromEntries((Object.keys(bins) as PeerName[]).map((n) => [n, binaryVersion(n, bins[n].path) ?? "unknown"])) as Record<PeerName, string>;
  for (const n of Object.keys(bins) as PeerName[]) {
    if (versions[n] !== PEER_RELEASES[n].release) console.warn(`bench: ${n} reports version ${versions[n]}, the stated release is ${PEER_RELEASES[n].release}`);
  }
  const { cert, key } = selfSignedCert(work);

  const { node, chain, final, mix } = await startBenchNode(procs, args["block-seconds"]);
  time.lap("node start");
  try {
    console.log(`bench peers: geth ${chain.geth} on the bench chain (blocks ${chain.firstBlock}-${chain.lastBlock}, ${chain.transactions} transactions; final up to ${final}; a new head every ${args["block-seconds"]} s); load average ${part.loadAverageAtStart.join(" ")}`);
    const up: PeerUpstream = { http: node.url, ws: node.wsUrl, chainId: chain.chainId, blockSeconds: args["block-seconds"] };
    const policy: PeerPolicy = { key: KEY, ratePerSecond: 1_000_000, maxBodyBytes: 1 << 20, cacheBytes: CACHE_BUDGET_BYTES.recommended };

    // The gateway, as generated, with its cache on (the budget the peers' caches get), twice: TLS and plain.
    const gatewayChain = [{ path: "eth", chainId: "ETH1", kind: "evm" as const, upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } }];
    const gwCache = { maxBytes: policy.cacheBytes, ...CACHE_DEFAULTS };
    const gws = { tls: await startBenchGateway({ work, name: "gw-tls", chains: gatewayChain, cache: gwCache, threads: THREADS }), plain: await startBenchGateway({ work, name: "gw-plain", chains: gatewayChain, cache: gwCache, threads: THREADS, plain: true }) };
    for (const g of Object.values(gws)) procs.adopt(g.proc);
    const gwCounter = (name: string) => (port: number) => async () => metricSum(await scrape(`http://127.0.0.1:${port}/metrics/cache`), name);
    const gwHits = gwCounter("rpcstack_cache_hits_total");
    // Reads at the head answered with an identical call's answer in flight (as eRPC's multiplexed requests).
    const gwMerged = gwCounter("rpcstack_cache_merged_total");

    const goEnv = { ...process.env, GOMAXPROCS: String(THREADS) };
    const erpc = { port: await freePort(), metricsPort: await freePort() };
    const erpcYaml = erpcConfig(up, erpc, { certFile: cert, keyFile: key }, policy);
    writeFileSync(join(work, "erpc.yaml"), erpcYaml);
    const erpcProc = procs.start("erpc", bins.erpc.path, [join(work, "erpc.yaml")], goEnv);
    const proxyd = { port: await freePort(), metricsPort: await freePort(), wsPort: await freePort() };
    const proxydToml = proxydConfig(up, proxyd, policy);
    writeFileSync(join(work, "proxyd.toml"), proxydToml);
    const proxydProc = procs.start("proxyd", bins.proxyd.path, [join(work, "proxyd.toml")], goEnv);
    const promHits = (port: number, metric: string) => async () => metricSum(await scrape(`http://127.0.0.1:${port}/metrics`), metric);

    const gwPath = `/gateway/eth/rpc-http/${KEY}`;
    const gwWs = `/gateway/eth/rpc/${KEY}?secret=null`;
    const haproxy = "HAProxy (generated config)";
    const cases: Case[] = [
      { name: "node", transport: "plain", http: node.url, ws: node.wsUrl, pid: node.pid, version: node.version },
      { name: "gateway", transport: "TLS", http: `${gws.tls.origin}${gwPath}`, ws: `${gws.tls.origin.replace("https", "wss")}${gwWs}`, pid: gws.tls.pid, hits: gwHits(gws.tls.metricsPort), merged: gwMerged(gws.tls.metricsPort), version: haproxy },
      { name: "erpc", against: "gateway", transport: "TLS", http: `https://127.0.0.1:${erpc.port}${erpcPath(up, KEY)}`, pid: erpcProc.pid!, hits: promHits(erpc.metricsPort, "erpc_cache_get_success_hit_total"), merged: promHits(erpc.metricsPort, "erpc_network_multiplexed_request_total"), version: `eRPC ${versions.erpc}` },
      { name: "gateway-plain", transport: "plain", http: `${gws.plain.origin}${gwPath}`, ws: `${gws.plain.origin.replace("http", "ws")}${gwWs}`, pid: gws.plain.pid, hits: gwHits(gws.plain.metricsPort), merged: gwMerged(gws.plain.metricsPort), version: haproxy },
      { name: "proxyd", against: "gateway-plain", transport: "plain", http: `http://127.0.0.1:${proxyd.port}${proxydPath(KEY)}`, ws: `ws://127.0.0.1:${proxyd.wsPort}${proxydPath(KEY)}`, pid: proxydProc.pid!, hits: promHits(proxyd.metricsPort, "proxyd_cache_hits_total"), version: `proxyd ${versions.proxyd}` },
    ];
    for (const c of cases) await waitAnswers(c.name, c.http);
    time.lap("proxies start");

    const scripts = { read: join(work, "read.lua"), relay: join(work, "relay.lua") };
    writeFileSync(scripts.read, readMixLua(mix));
    writeFileSync(scripts.relay, relayMixLua(mix.call));
    // Proof that every case serves both mixes; then each walks the read mix's working set, every cache until it holds it.
    for (const c of cases) for (const s of Object.values(scripts)) wrk(c.http, 1, CONNECTIONS, s);
    const warm = join(work, "warm.lua");
    writeFileSync(warm, warmMixLua(mix));
    for (const c of cases) await warmUp(c.name, c.http, CONNECTIONS, warm, warmMixCalls(mix), c.hits);
    time.lap("proofs and warm-ups");

    type Mix = "read" | "relay" | "ws";
    const runs: Record<Mix, Record<string, MixResult[]>> = { read: {}, relay: {}, ws: {} };
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate the order each round so drift does not favour one case.
      const order = round % 2 ? cases : [...cases].reverse();
      for (const mix of ["read", "relay"] as const) {
        for (const c of order) {
          const hits0 = c.hits && (await c.hits());
          const merged0 = c.merged && (await c.merged());
          const node0 = groupCpuMs(node.pid);
          const r: MixResult = await withCpu(c.pid, () => wrk(c.http, SECONDS, CONNECTIONS, scripts[mix]), SECONDS);
          r.nodeCpuUsPerRequest = fig(((groupCpuMs(node.pid) - node0) * 1000) / r.requests!);
          if (c.hits) r.hitRatio = fig(((await c.hits()) - hits0!) / r.requests!);
          if (c.merged) r.mergedRatio = fig(((await c.merged()) - merged0!) / r.requests!);
          (runs[mix][c.name] ??= []).push(r);
          console.log(`round ${round} ${mix} ${c.name}: ${show(r.rps)} req/s, ${show(r.cpuUsPerRequest)} us CPU/req (node ${show(r.nodeCpuUsPerRequest)})${r.hitRatio !== undefined ? `, hit ratio ${show(r.hitRatio)}` : ""}${r.mergedRatio !== undefined ? `, merged ${show(r.mergedRatio)}` : ""}`);
        }
      }
      for (const c of order.filter((c) => c.ws)) {
        const r = await withCpu(c.pid, () => wsRoundTrips(c.ws!, WS_SECONDS, CONNECTIONS), WS_SECONDS);
        (runs.ws[c.name] ??= []).push(r);
        console.log(`round ${round} ws ${c.name}: ${show(r.rps)} round trips/s, ${show(r.cpuUsPerRequest)} us CPU/rt`);
      }
    }

    // Correctness after the load, with every cache as full as the run left it.
    time.lap("rounds");
    const correctness = await checkCorrectness(node.url, mix, cases.filter((c) => c.name !== "node"));
    time.lap("correctness");
    for (const mix of ["read", "relay", "ws"] as const) for (const line of driftLines(mix, runs[mix])) console.log(line);

    const M = Object.fromEntries(Object.entries(runs).map(([mix, byCase]) => [mix, Object.fromEntries(Object.entries(byCase).map(([k, v]) => [k, median(v)]))])) as Record<Mix, Record<string, MixResult>>;
    // The gateway over each peer, round by round, in the same transport.
    const perRound = (mix: Mix, c: Case, pick: (r: Result) => number | undefined): Spread | undefined => {
      const g = runs[mix][c.against!];
      const p = runs[mix][c.name];
      return g && p ? spread(g.map((r, i) => pick(r)! / pick(p[i])!)) : undefined;
    };
    const peerCases = cases.filter((c) => c.against);
    const peersRatios: Record<string, Record<string, number>> = {};
    const spreads: Record<string, Record<string, { rps: Spread; cpuPerRequest: Spread }>> = {};
    for (const c of peerCases) {
      for (const mix of ["read", "relay", "ws"] as const) {
        const rps = perRound(mix, c, (r) => r.rps);
        const cpu = perRound(mix, c, (r) => r.cpuUsPerRequest);
        if (!rps || !cpu) continue;
        // Paired within each round (the rounds drift more than the cases in one round do), then the median.
        (peersRatios[c.name] ??= {})[mix] = rps.median;
        peersRatios[c.name][`${mix}CpuPerRequest`] = cpu.median;
        (spreads[c.name] ??= {})[mix] = { rps, cpuPerRequest: cpu };
      }
    }

    const date = new Date().toISOString();
    const done = part.end();
    const [load0, load1] = [done.loadAverage.start, done.loadAverage.end];
    const results = readResults();
    results.ratios = { ...results.ratios, peers: peersRatios };
    results.machine = { ...results.machine, ...machine() };
    results.parts = { ...results.parts, peers: done };
    results.peers = {
      date,
      machine: { cores: results.machine.cores, cpu: results.machine.cpu, loadAverageAtStart: load0, loadAverageAtEnd: load1 },
      settings: { secondsPerCase: SECONDS, wsSecondsPerCase: WS_SECONDS, rounds: ROUNDS, connections: CONNECTIONS, proxyThreads: THREADS, wrkThreads: 1, wrkPinnedTo: args.pin ?? null, node: node.version, blockSeconds: args["block-seconds"], blocks: chain.lastBlock, final, transactions: chain.transactions },
      versions: { gateway: haproxy, ...Object.fromEntries((Object.keys(bins) as PeerName[]).map((n) => [n, { release: PEER_RELEASES[n].release, reported: versions[n], commit: PEER_RELEASES[n].commit, source: bins[n].source }])) },
      configs: { erpc: erpcYaml.replace(KEY, "<key>"), proxyd: proxydToml.replace(KEY, "<key>") },
      transports: Object.fromEntries(cases.map((c) => [c.name, c.transport])),
      figures: M,
      spread: spreads,
      correctness,
      raw: runs,
    };
    mkdirSync(args.out, { recursive: true });
    writeFileSync(resultsFile, JSON.stringify(results, null, 2) + "\n");
    const bad = (name: string) => (correctness[name] && !correctness[name].ok ? "wrong answers" : undefined);
    writeFileSync(
      join(args.out, "peers.svg"),
      barChart(
        (["read", "relay", "ws"] as const).map((mix) => ({
          title: { read: "Read mix on geth", relay: "Relay mix (no cache helps)", ws: "WebSocket round trips (eth_blockNumber)" }[mix],
          unit: mix === "ws" ? "round trips/s, median of rounds" : "requests/s, median of rounds",
          bars: cases.filter((c) => M[mix][c.name]).map((c) => ({ label: c.name, value: M[mix][c.name].rps, note: bad(c.name) ?? `${c.transport}, ${show(M[mix][c.name].cpuUsPerRequest)} µs CPU`, color: COLORS[c.name.replace("-plain", "")] })),
        })),
        `rpcstack bench peers ${date}; eRPC ${versions.erpc}, proxyd ${versions.proxyd}; load average ${load0.join(" ")}`,
      ),
    );

    const title = { read: "Read mix (50% old blocks, 20% receipts, 10% chainId, 10% blockNumber, 10% latest block)", relay: "Relay mix (eth_blockNumber and eth_call on latest)", ws: "WebSocket round trips (eth_blockNumber)" };
    for (const mix of ["read", "relay", "ws"] as const) {
      console.log(`\n${title[mix]}, ${CONNECTIONS} connections, ${mix === "ws" ? WS_SECONDS : SECONDS}s x ${ROUNDS} rounds (median; gateway/peer per round: median (min-max, spread))\n`);
      const unit = mix === "ws" ? "rt" : "req";
      console.log(`| case | transport | ${unit}/s | p50 ms | p99 ms | CPU µs/${unit} | node CPU µs/${unit} | hit ratio | merged | gateway/peer ${unit}/s | gateway/peer CPU | answers (HTTP probes) |`);
      console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
      for (const c of cases) {
        const r = M[mix][c.name];
        if (!r) continue;
        const s = spreads[c.name]?.[mix];
        const answers = c.name === "node" ? "-" : describe(correctness[c.name]);
        console.log(`| ${c.name} | ${c.transport} | ${show(r.rps)} | ${show(r.p50ms)} | ${show(r.p99ms)} | ${show(r.cpuUsPerRequest)} | ${show(c.name === "node" ? undefined : r.nodeCpuUsPerRequest)} | ${show(r.hitRatio)} | ${show(r.mergedRatio)} | ${s ? showSpread(s.rps) : "-"} | ${s ? showSpread(s.cpuPerRequest) : "-"} | ${answers} |`);
      }
    }
    console.log(`\npeers: eRPC ${versions.erpc} (${bins.erpc.source}); proxyd ${versions.proxyd} (${bins.proxyd.source})`);
    console.log(`load average at start ${load0.join(" ")}, at end ${load1.join(" ")}`);
    console.log(`peers part: ${time.line()}`);
    console.log(`wrote ratios.peers and peers into ${resultsFile}, and ${join(args.out, "peers.svg")}`);
  } finally {
    await node.stop();
  }
}

runBench(procs, main);
