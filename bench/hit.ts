/**
 * What a cache hit costs (issue 52, item 2), on the same bytes over TLS: one call (eth_chainId,
 * id 1) and one 43-byte answer, the fixed-reply upstream's (bench/upstream.js), answered by the
 * cases of bench/hitCases.ts (a native return, a hit, a relay, and the steps of a hit between).
 * wrk on each in turn, rounds alternating; CPU per request of each HAProxy. Then where a hit's CPU
 * goes: perf samples of the hit case's HAProxy, by the library they fall in (TLS and crypto, Lua,
 * HAProxy's own code, the C library, the kernel) and its ten hottest symbols. Adds `hit` to
 * bench/results/latest.json.
 *
 *   npx tsx bench/hit.ts [--rounds N] [--seconds N] [--out DIR]   (the bench's one option list)
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../devtools/net.js";
import { benchArgs } from "./args.js";
import { fig, ratio, show } from "./figures.js";
import { BENCH_KEY, selfSignedCert, startBenchGateway, type BenchGateway } from "./gateway.js";
import { HIT_CALL, HIT_CASES, HIT_REPLY, hitCallScript, hitCases, type HitCase } from "./hitCases.js";
import { machine, partTimer } from "./machine.js";
import { loadTool, median, metricSum, scrape, withCpu, wrk, type Result } from "./measure.js";
import { benchProcesses, runBench } from "./processes.js";
import { perfShares } from "./profile.js";

const ROOT = join(__dirname, "..");
const args = benchArgs(process.argv.slice(2));
if (args.pin) loadTool.cpus = args.pin;
const procs = benchProcesses("rpcstack-bench-hit");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const part = partTimer();
  const work = procs.work;
  selfSignedCert(work);
  const [http, ws] = [await freePort(), await freePort()];
  procs.start("the fixed-reply upstream (bench/upstream.js)", process.execPath, [join(ROOT, "bench/upstream.js"), String(http), String(ws), "blocks"]);
  await sleep(500);
  const cases = hitCases(work, `http://127.0.0.1:${http}`, args.threads);
  const gws = {} as Record<HitCase, BenchGateway>;
  for (const name of HIT_CASES) gws[name] = await startBenchGateway(cases[name]);
  for (const g of Object.values(gws)) procs.adopt(g.proc);
  const script = hitCallScript(work);
  const url = (name: keyof typeof gws) => `${gws[name].origin}/gateway/eth/rpc-http/${BENCH_KEY}`;
  await sleep(2500); // the cache's first poll of the chain
  // Every case answers the same bytes; the hit case from its cache.
  for (const name of Object.keys(gws) as (keyof typeof gws)[]) {
    const got = execFileSync("curl", ["-sk", "-H", "Content-Type: application/json", "--data", HIT_CALL, url(name)], { encoding: "utf8" });
    if (got !== HIT_REPLY) throw new Error(`${name} answered ${got}, not ${HIT_REPLY}`);
    wrk(url(name), 1, args.connections, script);
  }
  const hits = async () => metricSum(await scrape(`http://127.0.0.1:${gws.hit.metricsPort}/metrics/cache`), "rpcstack_cache_hits_total");
  const runs: Record<string, Result[]> = {};
  for (let round = 1; round <= args.rounds; round++) {
    const order = Object.keys(gws) as (keyof typeof gws)[];
    if (round % 2 === 0) order.reverse();
    for (const name of order) {
      const h0 = await hits();
      const r = await withCpu(gws[name].pid, () => wrk(url(name), args.seconds, args.connections, script), args.seconds);
      if (name === "hit" && (await hits()) - h0 < r.requests! * 0.99) throw new Error(`the hit case answered ${(await hits()) - h0} of ${r.requests} calls from its cache`);
      (runs[name] ??= []).push(r);
      console.log(`round ${round} hit part ${name}: ${show(r.rps)} req/s, ${show(r.cpuUsPerRequest)} us CPU/req`);
    }
  }
  const M = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));
  const perRound = (a: string, b: string) => runs[a].map((r, i) => fig(r.cpuUsPerRequest! / runs[b][i].cpuUsPerRequest!));

  // Where a hit's CPU goes: perf on the hit case's HAProxy while wrk runs.
  let profile: ReturnType<typeof perfShares> | { skipped: string };
  const data = join(work, "perf.data");
  const perf = spawn("perf", ["record", "-F", "1999", "-p", String(gws.hit.pid), "-o", data, "--", "sleep", String(args.seconds)], { stdio: "ignore" });
  const recorded = new Promise<number>((r) => perf.on("exit", (code) => r(code ?? 1)).on("error", () => r(127)));
  await sleep(300);
  wrk(url("hit"), args.seconds, args.connections, script);
  const code = await recorded;
  if (code !== 0 || !existsSync(data)) profile = { skipped: `perf record exited ${code} (perf from Debian's linux-perf; it needs perf_event_paranoid <= 1 or root)` };
  else profile = perfShares(execFileSync("perf", ["report", "-i", data, "--stdio", "--no-children", "--sort", "dso,symbol"], { encoding: "utf8", maxBuffer: 64 << 20 }));

  const file = join(args.out, "latest.json");
  const results = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { date: new Date().toISOString() };
  results.machine = { ...results.machine, ...machine() };
  results.parts = { ...results.parts, hit: part.end() };
  results.hit = { reply: HIT_REPLY, call: HIT_CALL, seconds: args.seconds, rounds: args.rounds, connections: args.connections, medians: M, hitOverReturn: perRound("hit", "return"), relayOverReturn: perRound("relay", "return"), hitOverRelay: perRound("hit", "relay"), rulesOverReturn: perRound("rules+return", "return"), luaOverReturn: perRound("lua+return", "return"), luaDoneOverReturn: perRound("lua+done", "return"), profile, raw: runs };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + "\n");

  console.log(`\nThe same ${HIT_REPLY.length}-byte answer over TLS, ${args.connections} connections, ${args.seconds}s x ${args.rounds} rounds (median; ratios per round)`);
  for (const k of Object.keys(gws)) console.log(`  ${k.padEnd(7)} ${show(M[k].rps).padStart(8)} req/s  ${show(M[k].cpuUsPerRequest).padStart(6)} us CPU/req  x${show(ratio(M[k].cpuUsPerRequest!, M.return.cpuUsPerRequest!))} the return's`);
  const h = results.hit;
  console.log(`  CPU per request, per round: hit/return ${h.hitOverReturn.join(" ")}; relay/return ${h.relayOverReturn.join(" ")}; hit/relay ${h.hitOverRelay.join(" ")}; rules+return/return ${h.rulesOverReturn.join(" ")}; lua+return/return ${h.luaOverReturn.join(" ")}; lua+done/return ${h.luaDoneOverReturn.join(" ")}`);
  if ("skipped" in profile) console.log(`  where a hit's CPU goes: skipped (${profile.skipped})`);
  else {
    console.log(`  where a hit's CPU goes (perf samples of its HAProxy): ${Object.entries(profile.groups).sort((a, b) => b[1] - a[1]).map(([g, s]) => `${g} ${s}%`).join("; ")}`);
    console.log(`  hottest: ${profile.top.map((t) => `${t.symbol} (${t.dso}) ${t.share}%`).join("; ")}`);
  }
  console.log(`wrote hit into ${file}`);
}

runBench(procs, main);
