/** The bench's measurements: wrk for HTTP, WebSocket round trips, CPU per request, medians. */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import WebSocket from "ws";
import { fig, median as middle } from "./figures.js";

const ROOT = join(__dirname, "..");
const REQUEST = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';

export interface Result {
  rps: number;
  p50ms: number;
  p99ms: number;
  /** Requests completed in the run (wrk's count). */
  requests?: number;
  /** CPU time the proxy's processes spent per request, in microseconds (steadier than req/s on a shared machine). */
  cpuUsPerRequest?: number;
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || "100");

/** /proc/PID/stat's fields after the command name: [2] is the process group, [11] and [12] user and system ticks. */
const statFields = (pid: string | number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
};
const ticksToMs = (f: string[]) => ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;

/** CPU milliseconds used so far by every process in a process group (a proxy and its workers). */
export function groupCpuMs(pgid: number): number {
  let ms = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const f = statFields(d);
      if (Number(f[2]) === pgid) ms += ticksToMs(f);
    } catch {
      // the process ended while we looked
    }
  }
  return ms;
}

/** CPU milliseconds used so far by these processes (HAProxy runs its threads in one process). */
export const cpuMs = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + ticksToMs(statFields(pid)), 0);

/** Runs a measurement and adds the CPU the process group spent per request. */
export async function withCpu(pgid: number | undefined, measure: () => Result | Promise<Result>, seconds: number): Promise<Result> {
  const before = pgid ? groupCpuMs(pgid) : 0;
  const r = await measure();
  if (!pgid) return r;
  const requests = r.requests ?? r.rps * seconds;
  return { ...r, cpuUsPerRequest: fig(((groupCpuMs(pgid) - before) * 1000) / requests) };
}

const toMs = (v: string) => {
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) throw new Error(`wrk printed a latency it did not explain: ${v}`);
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
};

/** Where the load tool runs: `taskset` CPU list (e.g. "1") to pin it to a core, so it does not take turns with the proxy. */
export const loadTool: { cpus?: string } = {};

/** wrk on one thread; `script` makes the requests (bench/post.lua: one eth_blockNumber POST each), with `scriptArgs`. */
export function wrk(url: string, seconds: number, connections: number, script = join(ROOT, "bench/post.lua"), scriptArgs: readonly string[] = []): Result {
  const argv = ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency", "-s", script, url, ...(scriptArgs.length ? ["--", ...scriptArgs] : [])];
  const out = loadTool.cpus ? execFileSync("taskset", ["-c", loadTool.cpus, "wrk", ...argv], { encoding: "utf8" }) : execFileSync("wrk", argv, { encoding: "utf8" });
  const grab = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) throw new Error(`wrk could not measure ${url} (no ${re.source}):\n${out}`);
    return m[1];
  };
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  if (non2xx) throw new Error(`${url}: ${non2xx[1]} error responses:\n${out}`);
  return { rps: fig(Number(grab(/Requests\/sec:\s+([\d.]+)/))), p50ms: fig(toMs(grab(/^\s+50%\s+(\S+)/m))), p99ms: fig(toMs(grab(/^\s+99%\s+(\S+)/m))), requests: Number(grab(/(\d+) requests in/)) };
}

/**
 * Runs the warm-up walk of `calls` calls (bench/mixes.ts warmMixLua) against `url` in runs of a few
 * seconds, at most 10: where there is no cache to fill, until the walk is done once (the node's own
 * caches warm); else until a run finds at least 95% of its calls held (`hits`: the cache's hits so
 * far). Says how it went.
 */
export async function warmUp(name: string, url: string, connections: number, script: string, calls: number, hits?: () => Promise<number>): Promise<void> {
  const t0 = Date.now();
  let sent = 0;
  for (let pass = 1; pass <= 10; pass++) {
    const h0 = hits && (await hits());
    const r = wrk(url, 4, connections, script);
    sent += r.requests!;
    const held = hits ? ((await hits()) - h0!) / r.requests! : 0;
    if (hits ? held >= 0.95 : sent >= calls) return console.log(`warm-up ${name}: ${sent} calls in ${Math.round((Date.now() - t0) / 1000)} s (a walk is ${calls})${hits ? `, the last ${r.requests} ${fig(held)} held` : ""}`);
  }
  console.log(`warm-up ${name}: not done after 10 runs (${sent} calls; a walk is ${calls}): its rounds start ${hits ? "with a cache not yet full" : "before one whole walk"}`);
}

/**
 * Loopback addresses the WebSocket clients open from, in turn: the gateway lets one address open at
 * most 8 WebSockets a second and 30 in 10 s (gateway/limits.ts wsOpenRules), as a real crowd
 * comes from many addresses.
 */
const WS_CLIENT_ADDRESSES = Array.from({ length: 8 }, (_, i) => `127.0.0.${i + 2}`);

/** WebSocket round trips: each connection sends one JSON-RPC message and waits for its reply, in a loop. */
export async function wsRoundTrips(url: string, seconds: number, connections: number): Promise<Result> {
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  const loopback = new URL(url).hostname === "127.0.0.1";
  await Promise.all(
    Array.from({ length: connections }, async (_, i) => {
      const ws = new WebSocket(url, { rejectUnauthorized: false, ...(loopback ? { localAddress: WS_CLIENT_ADDRESSES[i % WS_CLIENT_ADDRESSES.length] } : {}) });
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
  const pct = (p: number) => fig(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]);
  return { rps: fig(latencies.length / seconds), p50ms: pct(50), p99ms: pct(99), requests: latencies.length };
}

/** The median of each figure every run has, by the bench's rounding rule (bench/figures.ts). */
export function median<R extends Result>(xs: readonly R[]): R {
  const keys = Object.keys(xs[0]).filter((k) => xs.every((r) => typeof (r as unknown as Record<string, unknown>)[k] === "number"));
  return Object.fromEntries(keys.map((k) => [k, fig(middle(xs.map((r) => (r as unknown as Record<string, number>)[k])))])) as unknown as R;
}

/**
 * A metrics page, tried twice: a scrape between two runs can meet a keep-alive socket the server is
 * closing (undici then says only "fetch failed"), which is no measurement error.
 */
export async function scrape(url: string): Promise<string> {
  try {
    return await (await fetch(url)).text();
  } catch {
    return await (await fetch(url)).text();
  }
}

/** The sum of every sample of one Prometheus counter (all label sets), or 0 when it has none yet. */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (m && m[1] === name) sum += Number(m[3]);
  }
  return sum;
}
