/**
 * One bench run for every figure (`npm run bench -- --cases all`): its options, where it ran, the
 * drift of each case over the rounds, and the summary table it prints from latest.json.
 */
import { describe, expect, it } from "vitest";
import { parseBenchArgs } from "../bench/args.js";
import { cpuModel, haproxyRelease, laps } from "../bench/machine.js";
import { drift, driftLines } from "../bench/rounds.js";
import { summaryMarkdown, type BenchResults } from "../bench/summary.js";

const rounds = (rps: number[], cpu: number[], extra: Partial<{ hitRatio: number[]; mergedRatio: number[] }> = {}) =>
  rps.map((r, i) => ({
    rps: r, p50ms: 1, p99ms: 2, cpuUsPerRequest: cpu[i],
    ...(extra.hitRatio ? { hitRatio: extra.hitRatio[i] } : {}),
    ...(extra.mergedRatio ? { mergedRatio: extra.mergedRatio[i] } : {}),
  }));
const part = (start: number[], end: number[], skipped?: string) => ({ startedAt: "2026-11-27T17:00:00.000Z", endedAt: "2026-11-27T17:05:00.000Z", loadAverage: { start, end }, ...(skipped ? { skipped } : {}) });

const run: BenchResults = {
  date: "2026-11-27T17:00:00.000Z",
  machine: { cores: 2, cpu: "AMD EPYC 7763 64-Core Processor", haproxyRelease: "3.2.26-1", nginx: "nginx version: nginx/1.22.1" },
  settings: { rounds: 3 },
  raw: {
    http: { gateway: rounds([30000, 28000, 33000], [27.5, 30, 25]), nginx: rounds([30000, 35000, 30000], [25, 20, 25]) },
    ws: { gateway: rounds([25000, 26000, 24000], [33, 34, 35]), nginx: rounds([40000, 39000, 38000], [11, 12, 10]) },
  },
  cache: { rounds: 3, raw: { node: rounds([8000, 7600, 7200], [300, 300, 300]), cache: rounds([16000, 15200, 18000], [150, 150, 150], { hitRatio: [0.8, 0.78, 0.81] }) } },
  parts: { relay: part([0.5, 0.4, 0.3], [1.2, 0.8, 0.5]), cache: part([1.2, 0.8, 0.5], [1.1, 0.9, 0.6]) },
};

describe("npm run bench -- --cases all", () => {
  it("runs every case of every part, and takes no other case beside it", () => {
    expect(parseBenchArgs(["--cases", "all", "--rounds", "5"])).toMatchObject({ all: true, cases: undefined, rounds: 5 });
    expect(parseBenchArgs(["--cases", "gateway,nginx"])).toMatchObject({ all: false, cases: ["gateway", "nginx"] });
    expect(parseBenchArgs(["--cases", "all,nginx"])).toEqual({ error: '--cases all runs every case of every part; it takes no other case (got "all,nginx")' });
  });
});

describe("where a run ran", () => {
  it("names the CPU as /proc/cpuinfo does and the HAProxy release as haproxy -v does", () => {
    expect(cpuModel("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\nprocessor\t: 1\nmodel name\t: AMD EPYC 7763 64-Core Processor\n")).toBe("AMD EPYC 7763 64-Core Processor");
    expect(cpuModel("processor\t: 0\n")).toBeUndefined();
    expect(haproxyRelease("HAProxy version 3.2.26-1 2026/10/14 - https://haproxy.org/")).toBe("3.2.26-1");
    expect(haproxyRelease("HA-Proxy version 2.6.12-1+deb12u2 2025/02/04 - https://haproxy.org/")).toBe("2.6.12-1+deb12u2");
  });
});

describe("drift over the rounds", () => {
  it("is the last round over the first, for each case", () => {
    expect(drift([8000, 7600, 7200])).toBe(0.9);
    expect(drift([8000])).toBeUndefined();
    expect(driftLines("read mix", { node: rounds([8000, 7600, 7200], [300, 320, 330]), wrk: [{ rps: 10, p50ms: 1, p99ms: 1 }, { rps: 11, p50ms: 1, p99ms: 1 }] })).toEqual([
      "drift read mix node: 8,000 -> 7,600 -> 7,200 req/s (round 3 over round 1: 0.9); 300 -> 320 -> 330 CPU µs/req (round 3 over round 1: 1.1)",
      "drift read mix wrk: 10 -> 11 req/s (round 2 over round 1: 1.1)",
    ]);
  });
});

describe("the summary of a run", () => {
  const lines = summaryMarkdown(run).split("\n");

  it("says where, on what and under which load each part ran, and what is missing", () => {
    expect(lines[0]).toBe("Measured 2026-11-27T17:00:00.000Z on 2 cores (AMD EPYC 7763 64-Core Processor), HAProxy 3.2.26-1 (the generated production config); 3 rounds, each figure the median with its range over the rounds (min-max), each ratio paired within a round.");
    expect(lines[1]).toBe("Load average (1, 5, 15 min) at the start -> end of each part: relay 0.5 0.4 0.3 -> 1.2 0.8 0.5; hit: not in this run; cache 1.2 0.8 0.5 -> 1.1 0.9 0.6; peers: not in this run; merge: not in this run.");
  });

  it("gives the gateway against nginx and the cache against the node, median (min-max) and the ratio paired per round", () => {
    expect(lines).toContain("| HTTP relay, fixed reply (TLS): req/s | 30,000 (28,000-33,000) | nginx/1.22.1 30,000 (30,000-35,000) | 1× (0.8-1.1) |");
    expect(lines).toContain("| HTTP relay: CPU µs per request | 27.5 (25-30) | nginx/1.22.1 25 (20-25) | 1.1× (1-1.5) |");
    expect(lines).toContain("| WebSocket round trips/s (the per-message policy on) | 25,000 (24,000-26,000) | nginx/1.22.1 39,000 (38,000-40,000) | 0.632× (0.625-0.667) |");
    expect(lines).toContain("| read mix on hardhat, cache on (hit ratio 0.8 (0.78-0.81)): req/s over the node alone | 16,000 (15,200-18,000) | node 7,600 (7,200-8,000) | 2× (2-2.5) |");
    expect(lines).toContain("The node alone, its last round's req/s over its first: read mix (cache part) 0.9×.");
  });

  it("names the node the read mix ran on, and calls a run that did not record it a hardhat run", () => {
    const geth = summaryMarkdown({ ...run, cache: { ...run.cache, node: "geth v1.17.5" }, peers: { settings: { node: "geth v1.17.5" } } });
    expect(geth).toContain("| read mix on geth v1.17.5, cache on (hit ratio 0.8 (0.78-0.81)): req/s over the node alone |");
    expect(geth).toContain("same geth v1.17.5 node and mixes)");
    expect(summaryMarkdown(run)).toContain("same hardhat node and mixes)");
  });

  it("gives a cache hit and a relay against a native return of the same answer, CPU per request paired per round", () => {
    const hit = summaryMarkdown({ ...run, hit: { reply: '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}', raw: { return: rounds([40000, 40000], [25, 30]), hit: rounds([20000, 21000], [50, 66]), relay: rounds([15000, 16000], [100, 90]) } } }).split("\n");
    expect(hit).toContain("| cache hit, the same 43-byte answer over TLS: CPU µs per request | 58 (50-66) | native return 27.5 (25-30) | 2.1× (2-2.2) |");
    expect(hit).toContain("| relay of the same call, no cache: CPU µs per request | 95 (90-100) | native return 27.5 (25-30) | 3.5× (3-4) |");
  });

  it("gives the instructions part's counts per request, the relays over nginx's and the hit's steps over the native return's, and names the part only where it ran", () => {
    const cases = { nginx: 50000, gateway: 200000, "gateway-scoped": 175000, "gateway-bare": 65000, return: 47000, hit: 282000, "lua+done": 87000 };
    const counted = summaryMarkdown({ ...run, instructions: { tool: "valgrind-3.19.0", scopedRulesRemoved: 31, cases: Object.fromEntries(Object.entries(cases).map(([k, v]) => [k, { perRequest: v }])) } }).split("\n");
    expect(counted[1]).toContain("; instructions: not recorded.");
    expect(counted).toContain("| relay: nginx, the key checked by a map | 50,000 | - |");
    expect(counted).toContain("| relay: the gateway, every check | 200,000 | 4× nginx |");
    expect(counted).toContain("| relay: the gateway, its route part scoped to the call's route (31 rules out): what evaluating only the rules that apply could reach | 175,000 | 3.5× nginx |");
    expect(counted).toContain("| a cache hit | 282,000 | 6× the return |");
    expect(counted).toContain("| a Lua action that reads the body and answers (txn:done) | 87,000 | 1.85× the return |");
    // A case the run did not count has no row.
    expect(counted.some((l) => l.startsWith("| a relay, no cache |"))).toBe(false);
    expect(lines.some((l) => l.includes("instructions"))).toBe(false);
  });

  it("gives the merge part per node, head interval and client count, with the stale answers it found", () => {
    const heads = (stale: number) => ({ checked: 20000, stale, worstBehind: stale ? 2 : 0 });
    const merge = summaryMarkdown({
      ...run,
      parts: { ...run.parts, merge: part([1, 1, 1], [2, 1, 1]) },
      merge: {
        cases: [
          { node: "geth v1.17.5", blockSeconds: 2, clients: 32, seconds: 10, calls: 48000, callsPerSecond: 4800, nodeCallsPerCall: 0.084, mergedShare: 0.916, aloneShare: 0.0212, heads: heads(0) },
          { node: "hardhat (evm_setIntervalMining)", blockSeconds: 0.15, clients: 64, seconds: 10, calls: 60000, callsPerSecond: 6000, nodeCallsPerCall: 0.033, mergedShare: 0.967, aloneShare: 0.003, heads: heads(3) },
        ],
      },
    }).split("\n");
    expect(lines[1]).toContain("merge: not in this run");
    expect(merge).toContain("| geth v1.17.5 | 2 s | 32 | 4,800 | 0.084 | 0.916 | 0.0212 | 20,000: 0 |");
    expect(merge).toContain("| hardhat (evm_setIntervalMining) | 0.15 s | 64 | 6,000 | 0.033 | 0.967 | 0.003 | 20,000: 3 (at most 2 blocks behind) |");
    expect(merge[1]).toContain("merge 1 1 1 -> 2 1 1");
  });

  it("leaves the peers' cells empty when they did not run, and says why", () => {
    const skipped = summaryMarkdown({ ...run, parts: { ...run.parts, peers: part([1, 1, 1], [1, 1, 1], "no peer binaries: RPCSTACK_BENCH_ERPC=/x: no such file") } });
    expect(skipped).toContain("; peers: skipped (no peer binaries: RPCSTACK_BENCH_ERPC=/x: no such file); merge: not in this run.");
    expect(skipped).toContain("| read mix (blocks, receipts, logs) | - | - |");
  });

  it("gives the gateway over each peer in its transport per mix, req/s and CPU per request, and the correctness", () => {
    const ok = { ok: true, calls: 120, wrongIds: 0, wrongResults: 0, errors: 0, heads: 20, headsBehind: 0, maxBlocksBehind: 0, examples: [] };
    const peers = summaryMarkdown({
      ...run,
      parts: { ...run.parts, peers: part([1.1, 0.9, 0.6], [1.5, 1, 0.7]) },
      peers: {
        versions: { erpc: { release: "0.1.2" }, proxyd: { release: "v4.30.0" } },
        raw: {
          read: { node: rounds([4000, 3600], [1, 1]), gateway: rounds([3000, 3200], [100, 100]), erpc: rounds([1500, 2000], [200, 250]), "gateway-plain": rounds([3000, 3000], [90, 90]), proxyd: rounds([1000, 1000], [300, 300]) },
          relay: { node: rounds([4000, 4000], [1, 1]), gateway: rounds([1000, 1000], [100, 100], { mergedRatio: [0.9, 0.94] }), erpc: rounds([4000, 4000], [100, 100], { mergedRatio: [0.92, 0.92] }), "gateway-plain": rounds([1000, 1000], [90, 90]), proxyd: rounds([1000, 1250], [180, 180]) },
          ws: { node: rounds([9000, 9000], [1, 1]), gateway: rounds([2000, 2000], [70, 70]), "gateway-plain": rounds([2400, 2400], [60, 60]), proxyd: rounds([1200, 1200], [240, 240]) },
        },
        correctness: { gateway: ok, erpc: ok },
      },
    });
    expect(peers).toContain("Against the peers in the same run (eRPC 0.1.2, proxyd v4.30.0;");
    expect(peers).toContain("| read mix (blocks, receipts, logs) | 1.8× (1.6-2); CPU 0.45× (0.4-0.5) | 3× (3-3); CPU 0.3× (0.3-0.3) |");
    expect(peers).toContain("| relay mix (`eth_blockNumber`, `eth_call` on latest) | 0.25× (0.25-0.25); CPU 1× (1-1) | 0.9× (0.8-1); CPU 0.5× (0.5-0.5) |");
    expect(peers).toContain("| WebSocket | (eRPC has none) | 2× (2-2); CPU 0.25× (0.25-0.25) |");
    expect(peers).toContain("Correctness (HTTP probes after the load): gateway ok (120 calls, 20 heads); erpc ok (120 calls, 20 heads).");
    expect(peers).toContain("read mix (peers part) 0.9×, relay mix (peers part) 1×");
    expect(peers).toContain("Relay mix calls answered with an identical call's answer in flight: gateway 0.92 (0.9-0.94), eRPC 0.92 (0.92-0.92).");
  });
});

describe("where a part's time goes", () => {
  it("names each phase with the whole seconds since the lap before", () => {
    const clock = [0, 33_400, 73_900, 75_000];
    const t = laps(() => clock.shift()!);
    t.lap("warm-ups");
    t.lap("rounds");
    t.lap("memory");
    expect(t.line()).toBe("warm-ups 33 s, rounds 41 s, memory 1 s");
  });
});
