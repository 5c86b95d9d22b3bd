/**
 * The response cache on a read mix against real geth on the bench chain (bench/node.ts: hundreds of
 * blocks of 150-300 transactions), in one run: the node alone, the gateway without cache, the
 * gateway with cache (both through the gateway's TLS listener). wrk sends the read mix
 * (bench/mixes.ts) with an id that changes per call. Then fills a small cache past its budget with
 * full blocks and a tiny one with receipts, and reads their memory, and
 * (bench/cacheLoad.ts, against a stand-in node of ~1 MiB blocks) measures HAProxy's peak memory
 * under --miss-connections concurrent misses at the default budget against the same load without
 * the cache, and one key's hit ratio before and after another key's scan.
 * Adds ratios.cache and cache to bench/results/latest.json (written by bench/run.ts first).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { CACHE_BUDGET_BYTES } from "../config/tiers.js";
import { freePort } from "../devtools/net.js";
import { benchArgs } from "./args.js";
import { cacheMetrics, gatewayStarter, metric, postTls, rssKiB } from "./cacheGateway.js";
import { missMemory, scanShare } from "./cacheLoad.js";
import { fig, ratio, show } from "./figures.js";
import { cpuMs, median, warmUp, wrk, type Result } from "./measure.js";
import { laps, machine, partTimer } from "./machine.js";
import { readMixLua, warmMixCalls, warmMixLua } from "./mixes.js";
import { startBenchNode } from "./node.js";
import { benchProcesses, runBench } from "./processes.js";
import { driftLines } from "./rounds.js";

const ROOT = join(__dirname, "..");
const args = benchArgs(process.argv.slice(2));
const SECONDS = args["cache-seconds"];
const ROUNDS = args.rounds;
const CONNECTIONS = args.connections;
/** The default budget of the minimum tier and devnet (config: gateway.cache.maxBytes). */
const DEFAULT_BUDGET = 64 * 1024 * 1024;
/**
 * The read mix's budget: the recommended tier's (a mainnet host's), which holds the mix's working
 * set (its final blocks with their transactions alone are ~50 MB).
 */
const READ_MIX_BUDGET = CACHE_BUDGET_BYTES.recommended;
const procs = benchProcesses("rpcstack-bench-cache");
const work = procs.work;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface MixResult extends Result {
  /** Cache hits over the requests wrk completed (the cached case). */
  hitRatio?: number;
}

const MiB = (kib: number) => show(kib / 1024);

async function main() {
  const part = partTimer();
  const time = laps();
  const startGw = gatewayStarter(procs, args.threads);
  const { node, chain, final, mix } = await startBenchNode(procs, args["block-seconds"]);
  time.lap("node start");
  try {
    const nodeLabel = `geth ${chain.geth} on the bench chain (blocks ${chain.firstBlock}-${chain.lastBlock}, ${chain.transactions} transactions, a block of ${show(chain.fullBlockBytes / 1024)} KiB with its transactions; final up to ${final}; a new head every ${args["block-seconds"]} s)`;
    console.log(`bench cache: ${nodeLabel}`);

    const plain = await startGw("nocache", node.url, undefined);
    const cached = await startGw("cache", node.url, { maxBytes: READ_MIX_BUDGET, ...CACHE_DEFAULTS });
    const script = join(work, "mix.lua");
    writeFileSync(script, readMixLua(mix));
    const cases: Record<string, { url: string; script: string; metricsPort?: number; pids: number[] }> = {
      node: { url: node.url, script, pids: [node.pid] },
      noCache: { url: plain.url(), script, pids: [node.pid, plain.pid] },
      cache: { url: cached.url(), script, metricsPort: cached.metricsPort, pids: [node.pid, cached.pid] },
    };
    // Every case walks the working set first (the node's own caches warm too), the cache until it holds it.
    const warm = join(work, "warm.lua");
    writeFileSync(warm, warmMixLua(mix));
    for (const [name, c] of Object.entries(cases)) await warmUp(name, c.url, CONNECTIONS, warm, warmMixCalls(mix), c.metricsPort ? async () => metric(await cacheMetrics(c.metricsPort!), "hits_total") : undefined);
    time.lap("warm-ups");
    const runs: Record<string, MixResult[]> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      const order = Object.keys(cases);
      if (round % 2 === 0) order.reverse();
      for (const name of order) {
        const c = cases[name];
        const before = c.metricsPort ? await cacheMetrics(c.metricsPort) : "";
        const cpu0 = cpuMs(c.pids);
        const r: MixResult = wrk(c.url, SECONDS, CONNECTIONS, c.script);
        r.cpuUsPerRequest = fig(((cpuMs(c.pids) - cpu0) * 1000) / r.requests!);
        if (c.metricsPort) {
          const after = await cacheMetrics(c.metricsPort);
          // Hits over every request wrk completed (the cache sees only calls that name a cacheable method).
          r.hitRatio = fig((metric(after, "hits_total") - metric(before, "hits_total")) / r.requests!);
        }
        (runs[name] ??= []).push(r);
        console.log(`round ${round} read mix ${name}: ${r.rps} req/s, ${r.cpuUsPerRequest} us CPU/req${r.hitRatio !== undefined ? `, hit ratio ${r.hitRatio}` : ""}`);
      }
    }
    const M = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])) as Record<string, MixResult>;
    for (const line of driftLines("read mix", runs)) console.log(line);

    time.lap("rounds");
    // Memory: a cache of 8 MiB offered about three times that in final blocks, each both ways.
    const budget = 8 * 1024 * 1024;
    const small = await startGw("small", node.url, { maxBytes: budget, ...CACHE_DEFAULTS });
    const rssNoCache = rssKiB(plain.pid);
    const rssBefore = rssKiB(small.pid);
    let peakRss = 0;
    let bigOffered = 0;
    for (let n = mix.oldFirst; n <= mix.oldLast && bigOffered < 3 * budget; n++) {
      for (const full of [true, false]) {
        bigOffered += (await postTls(small.url(), `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x${n.toString(16)}",${full}]}`)).text.length;
        peakRss = Math.max(peakRss, rssKiB(small.pid));
      }
    }
    const mm = await cacheMetrics(small.metricsPort);
    // And many small answers (~1-2 KB) through a 1 MiB budget: the receipts of final blocks.
    const tinyBudget = 1024 * 1024;
    const tiny = await startGw("tiny", node.url, { maxBytes: tinyBudget, ...CACHE_DEFAULTS });
    const tinyBodies = mix.txs.map((t) => `{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionReceipt","params":["${t}"]}`);
    let tinyOffered = 0;
    for (const body of tinyBodies) {
      tinyOffered += (await postTls(tiny.url(), body)).text.length;
    }
    const tm = await cacheMetrics(tiny.metricsPort);
    const memory = {
      budgetBytes: budget,
      offeredBytes: bigOffered,
      heldBytes: metric(mm, "bytes"),
      entries: metric(mm, "entries"),
      evictions: metric(mm, "evictions_total"),
      luaMemoryBytes: metric(mm, "lua_memory_bytes"),
      haproxyRssKiB: { withoutCache: rssNoCache, cacheEmpty: rssBefore, cacheFilledPeak: peakRss, cacheFilledEnd: rssKiB(small.pid) },
      small: {
        budgetBytes: tinyBudget,
        offeredBytes: tinyOffered,
        answers: tinyBodies.length,
        heldBytes: metric(tm, "bytes"),
        entries: metric(tm, "entries"),
        evictions: metric(tm, "evictions_total"),
        luaMemoryBytes: metric(tm, "lua_memory_bytes"),
        haproxyRssKiB: rssKiB(tiny.pid),
      },
    };

    time.lap("memory");
    // Misses under load and one key's scan, against the stand-in node of ~1 MiB blocks.
    const bigPort = await freePort();
    procs.start("the stand-in node (bench/bigBlocks.js)", process.execPath, [join(ROOT, "bench/bigBlocks.js"), String(bigPort), String(1 << 20), "20"]);
    await sleep(500);
    const bigUrl = `http://127.0.0.1:${bigPort}`;
    const misses = await missMemory(startGw, bigUrl, DEFAULT_BUDGET, args["miss-connections"], args["miss-seconds"]);
    const smallMisses = await missMemory(startGw, bigUrl, DEFAULT_BUDGET, args["miss-connections"], args["small-miss-seconds"], true);
    const scan = await scanShare(startGw, bigUrl, DEFAULT_BUDGET);
    time.lap("misses and scan");

    const results = existsSync(join(args.out, "latest.json")) ? JSON.parse(readFileSync(join(args.out, "latest.json"), "utf8")) : { date: new Date().toISOString() };
    results.ratios = {
      ...results.ratios,
      cache: {
        gatewayOverNode: ratio(M.cache.rps, M.node.rps),
        cacheOverNoCache: ratio(M.cache.rps, M.noCache.rps),
        noCacheOverNode: ratio(M.noCache.rps, M.node.rps),
        // CPU per request of node + gateway, node alone over cached gateway (higher: the cache saves more).
        cpuNodeOverCache: ratio(M.node.cpuUsPerRequest!, M.cache.cpuUsPerRequest!),
        cpuNoCacheOverCache: ratio(M.noCache.cpuUsPerRequest!, M.cache.cpuUsPerRequest!),
        // HAProxy's peak memory under concurrent misses over the target (2x budget + no-cache peak): at most 1 holds it.
        missPeakOverTarget: ratio(misses.cache.peakRssKiB, misses.targetKiB),
        smallMissPeakOverTarget: ratio(smallMisses.cache.peakRssKiB, smallMisses.targetKiB),
      },
    };
    results.machine = { ...results.machine, ...machine() };
    results.parts = { ...results.parts, cache: part.end() };
    results.cache = { hitRatio: M.cache.hitRatio, readMix: M, node: node.version, chain: { ...chain, sampleTxs: chain.sampleTxs.length, sampleHolders: chain.sampleHolders.length }, final, blockSeconds: args["block-seconds"], budgetBytes: READ_MIX_BUDGET, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, memory, misses, smallMisses, scan, raw: runs };
    mkdirSync(args.out, { recursive: true });
    writeFileSync(join(args.out, "latest.json"), JSON.stringify(results, null, 2) + "\n");

    console.log(`\nRead mix on ${nodeLabel}, a cache of ${MiB(READ_MIX_BUDGET / 1024)} MiB, ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} rounds (median)\n`);
    console.log("| case                  |    req/s | p50 ms  | p99 ms  | vs node | hit ratio | CPU us/req |");
    console.log("| --------------------- | -------- | ------- | ------- | ------- | --------- | ---------- |");
    const label: Record<string, string> = { node: "node alone", noCache: "gateway without cache", cache: "gateway with cache" };
    for (const k of ["node", "noCache", "cache"]) {
      const r = M[k];
      console.log(`| ${label[k].padEnd(21)} | ${show(r.rps).padStart(8)} | ${show(r.p50ms).padStart(7)} | ${show(r.p99ms).padStart(7)} | ${show(ratio(r.rps, M.node.rps)).padStart(7)} | ${show(r.hitRatio).padStart(9)} | ${show(r.cpuUsPerRequest).padStart(10)} |`);
    }
    const rc = results.ratios.cache;
    console.log(`\nratios (read mix req/s): cache/node ${rc.gatewayOverNode}, cache/no cache ${rc.cacheOverNoCache}, no cache/node ${rc.noCacheOverNode}; hit ratio ${M.cache.hitRatio}`);
    console.log(`ratios (CPU per request, node + gateway): node alone/cache ${rc.cpuNodeOverCache}, no cache/cache ${rc.cpuNoCacheOverCache}`);
    console.log(`memory: budget ${budget} bytes; ${bigOffered} bytes of final blocks offered; held ${memory.heldBytes} bytes in ${memory.entries} entries after ${memory.evictions} evictions; Lua state ${Math.round(memory.luaMemoryBytes / 1024)} KiB; HAProxy RSS without cache ${rssNoCache} KiB, cache empty ${rssBefore} KiB, filled (peak) ${peakRss} KiB, after ${memory.haproxyRssKiB.cacheFilledEnd} KiB`);
    const sm = memory.small;
    console.log(`memory, small answers: budget ${sm.budgetBytes} bytes; ${sm.answers} answers (${sm.offeredBytes} bytes) offered; held ${sm.heldBytes} bytes in ${sm.entries} entries after ${sm.evictions} evictions; Lua state ${Math.round(sm.luaMemoryBytes / 1024)} KiB; HAProxy RSS ${sm.haproxyRssKiB} KiB`);
    for (const m of [misses, smallMisses]) {
      console.log(
        `${m.small ? "small misses" : "misses"}: ${m.connections} connections of distinct ${m.small ? "~250 B" : "~1 MiB"} misses for ${m.seconds}s at a budget of ${MiB(m.budgetBytes / 1024)} MiB ` +
          `(${MiB(m.heldBeforeBytes / 1024)} MiB held before, ${MiB(m.heldAfterBytes / 1024)} MiB in ${m.entriesAfter} entries after, ${m.misses} misses, ${m.evictions} evictions, Lua state ${MiB(m.luaMemoryBytes / 1024)} MiB): ` +
          `HAProxy peak RSS ${MiB(m.cache.peakRssKiB)} MiB with the cache (${m.cache.rps} req/s), ${MiB(m.noCache.peakRssKiB)} MiB without (${m.noCache.rps} req/s); ` +
          `target (2x budget + without${m.small ? " + a request buffer per connection" : ""}) ${MiB(m.targetKiB)} MiB: ${m.cache.peakRssKiB <= m.targetKiB ? "within" : "OVER"}`,
      );
    }
    console.log(`scan: one key's ${scan.ownBlocks} held ~1 MiB blocks read again: hit ratio ${scan.hitRatioWithoutScan} without a scan, ${scan.hitRatioAfterScan} after another key read ${scan.scanBlocks} distinct ~1 MiB blocks (${scan.evictions} evictions, budget ${MiB(scan.budgetBytes / 1024)} MiB)`);
    console.log(`cache part: ${time.line()}`);
    console.log(`wrote ratios.cache and cache into ${join(args.out, "latest.json")}`);
  } finally {
    await node.stop();
  }
}

runBench(procs, main);
