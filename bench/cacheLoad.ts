/**
 * Two loads the cache must not follow, against bench/bigBlocks.js (a stand-in node: every block
 * final, a block with full transactions ~1 MiB):
 * - misses: HAProxy's peak memory (VmHWM) under many concurrent misses of distinct ~1 MiB answers
 *   (or, `small`, of distinct answers of ~250 bytes, which fill the cache with many entries) at a
 *   given budget, the cache holding ~40 MB before, against the same load on a gateway without the
 *   cache (the target: within 2x the budget plus that baseline; for small answers plus one request
 *   buffer, tune.bufsize, per connection: docs/cache.md#memory);
 * - scan: one key's held blocks read again after another key read 100 distinct ~1 MiB blocks.
 */
import { join } from "node:path";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { bufferSize } from "../gateway/limits.js";
import { BENCH_MAX_BODY_BYTES } from "./gateway.js";
import { BENCH_KEYS, cacheMetrics, metric, peakRssKiB, postTls, rssKiB, type CacheGateway } from "./cacheGateway.js";
import { fig } from "./figures.js";
import { wrk, type Result } from "./measure.js";

type Start = (name: string, upstream: string, cache: { maxBytes: number; maxObjectBytes: number; pollIntervalMs: number } | undefined) => Promise<CacheGateway>;

const ROOT = join(__dirname, "..");
const block = (n: number, full: boolean) => `{"jsonrpc":"2.0","id":${n},"method":"eth_getBlockByNumber","params":["0x${n.toString(16)}",${full}]}`;
/** Blocks held before the misses: ~40 MB, as the audit's gateway held 39.5 MB. */
const HELD_BLOCKS = 40;
/** The misses ask for numbers from here up, none held. */
const MISSES_FROM = 1_000_000;

export interface MissMemory {
  /** Distinct small answers (a block without its transactions) rather than ~1 MiB ones. */
  small: boolean;
  budgetBytes: number;
  connections: number;
  seconds: number;
  heldBeforeBytes: number;
  /** HAProxy's memory with the cache holding heldBeforeBytes, before the misses. */
  rssHeldKiB: number;
  heldAfterBytes: number;
  entriesAfter: number;
  misses: number;
  evictions: number;
  /** The Lua state holding the cache after the misses. */
  luaMemoryBytes: number;
  noCache: Result & { peakRssKiB: number; rssAfterKiB: number };
  cache: Result & { peakRssKiB: number; rssAfterKiB: number };
  /** 2x the budget plus the peak without the cache (small answers: plus a request buffer per connection). */
  targetKiB: number;
}

export async function missMemory(start: Start, node: string, budget: number, connections: number, seconds: number, small = false): Promise<MissMemory> {
  const name = small ? "small-misses" : "misses";
  const noCache = await start(`${name}-nocache`, node, undefined);
  const cached = await start(`${name}-cache`, node, { maxBytes: budget, ...CACHE_DEFAULTS });
  for (let n = 1; n <= HELD_BLOCKS; n++) await postTls(cached.url(), block(n, true));
  const heldBeforeBytes = metric(await cacheMetrics(cached.metricsPort), "bytes");
  const rssHeldKiB = rssKiB(cached.pid);
  const run = (gw: CacheGateway) => {
    const r = wrk(gw.url(), seconds, connections, join(ROOT, "bench/misses.lua"), [String(MISSES_FROM), String(!small)]);
    return { ...r, peakRssKiB: peakRssKiB(gw.pid), rssAfterKiB: rssKiB(gw.pid) };
  };
  const without = run(noCache);
  const withCache = run(cached);
  const m = await cacheMetrics(cached.metricsPort);
  return {
    small, budgetBytes: budget, connections, seconds, heldBeforeBytes, rssHeldKiB, heldAfterBytes: metric(m, "bytes"), entriesAfter: metric(m, "entries"),
    misses: metric(m, "misses_total"), evictions: metric(m, "evictions_total"), luaMemoryBytes: metric(m, "lua_memory_bytes"),
    noCache: without, cache: withCache,
    targetKiB: Math.round((2 * budget + (small ? connections * bufferSize(BENCH_MAX_BODY_BYTES) : 0)) / 1024) + without.peakRssKiB,
  };
}

export interface ScanShare {
  budgetBytes: number;
  ownBlocks: number;
  scanBlocks: number;
  /** The first key's hits over its blocks read again, before and after the second key's scan. */
  hitRatioWithoutScan: number;
  hitRatioAfterScan: number;
  evictions: number;
}

const OWN_BLOCKS = 24;
const SCAN_BLOCKS = 100;

export async function scanShare(start: Start, node: string, budget: number): Promise<ScanShare> {
  const gw = await start("scan", node, { maxBytes: budget, ...CACHE_DEFAULTS });
  const [owner, scanner] = BENCH_KEYS.map((k) => gw.url(k.key));
  const pass = async () => {
    let hits = 0;
    for (let n = 1; n <= OWN_BLOCKS; n++) if ((await postTls(owner, block(n, true))).cache === "HIT") hits++;
    return fig(hits / OWN_BLOCKS);
  };
  await pass();
  const hitRatioWithoutScan = await pass();
  for (let n = 0; n < SCAN_BLOCKS; n++) await postTls(scanner, block(MISSES_FROM + n, true));
  const hitRatioAfterScan = await pass();
  return { budgetBytes: budget, ownBlocks: OWN_BLOCKS, scanBlocks: SCAN_BLOCKS, hitRatioWithoutScan, hitRatioAfterScan, evictions: metric(await cacheMetrics(gw.metricsPort), "evictions_total") };
}
