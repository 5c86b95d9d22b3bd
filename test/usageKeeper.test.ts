/**
 * The usage keeper (usage/keeperMain.ts) against the real HAProxy 3.2 with a usage table like the
 * gateway's: a known mix of requests, HAProxy killed and started again, the keeper stopped and
 * started again; its /usage, `npm run usage` and a real Prometheus scraping /metrics give exactly
 * the counts sent.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { HAPROXY_LOOPBACK_FLAGS, haproxyBinary } from "../devtools/haproxy.js";
import { main } from "../usage/keeperMain.js";
import { parseShowTable, type Counters } from "../usage/table.js";
import { ROOT } from "./harness.js";
import { eventually } from "./support/http.js";
import { freePort, start, stopEach, waitFor, type Child } from "./support/net.js";
import { startPrometheus, type RunningPrometheus } from "./support/prometheus.js";

const dir = mkdtempSync(join(tmpdir(), "rpcstack-usagekeeper-"));
const sock = join(dir, "admin.sock");
const file = join(dir, "usage.json");
const started: (Child | RunningPrometheus)[] = [];
afterAll(async () => {
  await stopEach(...started.reverse());
  rmSync(dir, { recursive: true, force: true });
});

// The gateway's table, counters added from what the request says it is.
const config = (port: number) => `global
  tune.stick-counters 5
  stats socket ${sock} level admin
defaults
  mode http
  timeout client 10s
  timeout server 10s
  timeout connect 5s
backend st_usage
  stick-table type string len 160 size 100k expire 1d store http_req_cnt,bytes_out_cnt,gpc(4)
frontend fe
  bind 127.0.0.1:${port}
  http-request set-var(txn.u) req.hdr(x-usage)
  http-request track-sc4 var(txn.u) table st_usage
  http-request sc-add-gpc(0,4) req.hdr_val(x-calls)
  http-request sc-inc-gpc(3,4) if { req.hdr(x-cache) -m str 1 }
  http-after-response sc-inc-gpc(2,4) if { status 429 }
  http-after-response sc-inc-gpc(1,4) if { status ge 400 } !{ status 429 }
  http-request return status 200 content-type application/json string "[{\\"jsonrpc\\":\\"2.0\\",\\"id\\":1,\\"result\\":\\"0x1\\"}]" if { path /ok }
  http-request return status 429 content-type text/plain string "slow down" if { path /limited }
  http-request return status 500 content-type text/plain string "broken" if { path /bad }
  http-request return status 404 content-type text/plain string "no such path"
`;

/** HAProxy on a free port with the runtime API on `sock`; again on other ports when another test took the port. */
async function startHaproxy(): Promise<{ child: Child; base: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    writeFileSync(join(dir, "haproxy.cfg"), config(port));
    const child = start(haproxyBinary(), [...HAPROXY_LOOPBACK_FLAGS, "-f", join(dir, "haproxy.cfg")]);
    started.push(child);
    try {
      await waitFor("HAProxy's runtime API", async () => ((await runtimeCommand(sock, "show info")).includes(`Pid: ${child.proc.pid}`) ? true : undefined), 10_000);
      return { child, base: `http://127.0.0.1:${port}` };
    } catch (e) {
      await child.stop();
      if (attempt === 3 || !/cannot bind/.test(child.output())) throw new Error(`${(e as Error).message}\n${child.output()}`);
    }
  }
}

/** Kills HAProxy as a crash does, and waits until it is gone. */
function kill(h: { child: Child }): Promise<void> {
  return new Promise((resolve) => {
    h.child.proc.once("close", () => resolve());
    process.kill(-h.child.proc.pid!, "SIGKILL");
  });
}

/** What the test sent, as the ledger should count it, per entry. */
const sent = new Map<string, Counters>();
/** Bytes HAProxy counted for each entry, summed over its processes (read from HAProxy itself before each kill). */
const bytes = new Map<string, number>();

const MIX = [
  { entry: "ci-first/eth/http", path: "/ok", calls: 3, cache: false, times: 4 },
  { entry: "ci-first/eth/http", path: "/limited", calls: 1, cache: false, times: 2 },
  { entry: "ci-first/eth/http", path: "/ok", calls: 1, cache: true, times: 3 },
  { entry: "team.b/strk/ws", path: "/ok", calls: 5, cache: false, times: 1 },
  { entry: "team.b/strk/ws", path: "/bad", calls: 1, cache: false, times: 2 },
  { entry: "ci-first/cosmoshub/rest", path: "/nope", calls: 1, cache: false, times: 1 },
];

async function sendMix(base: string): Promise<void> {
  for (const m of MIX) {
    for (let i = 0; i < m.times; i++) {
      const res = await fetch(`${base}${m.path}`, { headers: { "x-usage": m.entry, "x-calls": String(m.calls), ...(m.cache ? { "x-cache": "1" } : {}) } });
      await res.arrayBuffer();
      const c = sent.get(m.entry) ?? { calls: 0, errors: 0, limited: 0, cacheHits: 0, requests: 0, bytesOut: 0 };
      const status = res.status;
      sent.set(m.entry, { ...c, calls: c.calls + m.calls, errors: c.errors + (status >= 400 && status !== 429 ? 1 : 0), limited: c.limited + (status === 429 ? 1 : 0), cacheHits: c.cacheHits + (m.cache ? 1 : 0), requests: c.requests + 1 });
    }
  }
}

async function countBytes(): Promise<void> {
  for (const row of parseShowTable(await runtimeCommand(sock, "show table st_usage")).rows) {
    const id = `${row.key}/${row.chain}/${row.iface}`;
    bytes.set(id, (bytes.get(id) ?? 0) + row.counters.bytesOut);
  }
}

const expected = () => [...sent].map(([id, c]) => ({ id, ...c, bytesOut: bytes.get(id) })).sort((a, b) => a.id.localeCompare(b.id));

interface Keeper {
  readonly child: Child;
  readonly url: string;
}

async function startKeeper(intervalSeconds: number): Promise<Keeper> {
  // One node process, as the container runs its bundle. tsx's own CLI is a second process that
  // passes a SIGTERM on: when the program has not told it within 30 ms that it got one (a busy CI
  // machine), it sends another, and the keeper, whose handler takes the first, ends with 143 before
  // it has saved (CI, 2026-11-30).
  const child = start(process.execPath, ["--import", "tsx", join(ROOT, "usage/keeperMain.ts"), "--admin", sock, "--file", file, "--listen", "127.0.0.1:0", "--interval-seconds", String(intervalSeconds)], { cwd: ROOT });
  started.push(child);
  const port = await waitFor("the usage keeper", async () => /serving \/metrics and \/usage on 127\.0\.0\.1:(\d+)/.exec(child.output())?.[1], 30_000).catch((e) => {
    throw new Error(`${e.message}\n${child.output()}`);
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** The keeper's /usage summed over its days, per entry, in `expected()`'s shape. */
async function usageOf(k: Keeper, bytesToo = true): Promise<unknown[]> {
  const { rows } = (await (await fetch(`${k.url}/usage?since=2000-01-01`)).json()) as { rows: (Counters & { key: string; chain: string; interface: string })[] };
  const sums = new Map<string, Counters>();
  for (const r of rows) {
    const id = `${r.key}/${r.chain}/${r.interface}`;
    const s = sums.get(id) ?? { calls: 0, errors: 0, limited: 0, cacheHits: 0, requests: 0, bytesOut: 0 };
    sums.set(id, { calls: s.calls + r.calls, errors: s.errors + r.errors, limited: s.limited + r.limited, cacheHits: s.cacheHits + r.cacheHits, requests: s.requests + r.requests, bytesOut: s.bytesOut + r.bytesOut });
  }
  return [...sums].map(([id, c]) => ({ id, ...c, bytesOut: bytesToo ? c.bytesOut : undefined })).sort((a, b) => (a.id as string).localeCompare(b.id));
}
const withoutBytes = () => expected().map((e) => ({ ...e, bytesOut: undefined }));

describe("the usage keeper on the real HAProxy 3.2", () => {
  let keeper: Keeper;

  it("keeps every count through a restart of itself, HAProxy down, and HAProxy killed while it runs", async () => {
    // A keeper that reads only at start and when told to stop: what it saves at SIGTERM is all
    // that is left of the first HAProxy's counts once that is killed.
    let haproxy = await startHaproxy();
    const first = await startKeeper(3600);
    await sendMix(haproxy.base);
    const closed = new Promise<number | null>((r) => first.child.proc.once("close", (code) => r(code)));
    process.kill(-first.child.proc.pid!, "SIGTERM");
    expect(await closed).toBe(0);
    await countBytes();
    await kill(haproxy);

    // With HAProxy down the ledger is served as saved, and the keeper says so once.
    keeper = await startKeeper(0.2);
    await eventually("the keeper's health", async () => (await fetch(`${keeper.url}/healthz`)).json() as Promise<{ haproxyProblem?: string }>, (h) => !!h.haproxyProblem);
    expect(await usageOf(keeper)).toEqual(expected());
    await new Promise((r) => setTimeout(r, 600));
    expect(keeper.child.output().match(/HAProxy did not answer/g)).toHaveLength(1);

    // A new HAProxy counts from 0; then it is killed while the keeper runs, and another starts.
    haproxy = await startHaproxy();
    await sendMix(haproxy.base);
    await eventually("the second HAProxy's counts", () => usageOf(keeper, false), (u) => JSON.stringify(u) === JSON.stringify(withoutBytes()), 15_000);
    await countBytes();
    await kill(haproxy);
    haproxy = await startHaproxy();
    await sendMix(haproxy.base);
    await eventually("the third HAProxy's counts", () => usageOf(keeper, false), (u) => JSON.stringify(u) === JSON.stringify(withoutBytes()), 15_000);
    await countBytes();
    expect(sent.get("ci-first/eth/http")).toMatchObject({ calls: 3 * 17, requests: 3 * 9, limited: 3 * 2, cacheHits: 3 * 3, errors: 0 });
    expect(await usageOf(keeper)).toEqual(expected());
    expect(keeper.child.output()).toContain("HAProxy answers again");
    expect(readFileSync(file, "utf8")).toContain('"ci-first/eth/http"');
  }, 120_000);

  it("answers a bad day with 400 saying which, and is healthy while it saves", async () => {
    const bad = await fetch(`${keeper.url}/usage?since=2026-11-01&until=2026-02-30`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "until must be a day written YYYY-MM-DD" });
    const health = await fetch(`${keeper.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ saved: true });
  });

  it("npm run usage prints the same counts from the keeper, as JSON", async () => {
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const p = spawn("npm", ["run", "--silent", "usage", "--", "--since", "2000-01-01", "--format", "json", "--url", keeper.url], { cwd: ROOT });
      let text = "";
      p.stdout.on("data", (d) => (text += d));
      p.stderr.on("data", (d) => (text += d));
      p.on("close", (code) => resolve({ code, text }));
    });
    expect(out.code, out.text).toBe(0);
    const rows = JSON.parse(out.text) as (Counters & { key: string; chain: string; interface: string })[];
    expect(rows.map(({ day: _, key, chain, interface: i, ...c }: any) => ({ id: `${key}/${chain}/${i}`, ...c }))).toEqual(expected());
  }, 60_000);

  it("Prometheus scraping /metrics returns the counts sent", async () => {
    const promDir = mkdtempSync(join(dir, "prom-"));
    writeFileSync(join(promDir, "prometheus.yml"), `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: usage\n    static_configs:\n      - targets: ["${new URL(keeper.url).host}"]\n`);
    const prom = await startPrometheus(promDir);
    started.push(prom);
    const q = 'rpcstack_usage_calls_total{key="ci-first",chain="eth",interface="http"}';
    const r = await eventually("the calls in Prometheus", () => prom.query(q), (a) => (a.data?.result.length ?? 0) > 0, 30_000);
    expect((r.data!.result[0] as { value: [number, string] }).value[1]).toBe(String(sent.get("ci-first/eth/http")!.calls));
    const limited = await prom.query('sum(rpcstack_usage_limited_total)');
    expect((limited.data!.result[0] as { value: [number, string] }).value[1]).toBe(String(3 * 2));
    const bytesOut = await prom.query('rpcstack_usage_bytes_out_total{key="team.b",interface="ws"}');
    expect((bytesOut.data!.result[0] as { value: [number, string] }).value[1]).toBe(String(bytes.get("team.b/strk/ws")));
  }, 60_000);
});

describe("rpcstack-usage's arguments", () => {
  afterEach(() => vi.restoreAllMocks());
  const run = async (argv: string[]) => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((s: string) => void lines.push(s));
    vi.spyOn(console, "error").mockImplementation((s: string) => void lines.push(s));
    return { code: await main(argv), text: lines.join("\n") };
  };

  it("--help: exit 0", async () => expect(await run(["--help"])).toMatchObject({ code: 0, text: expect.stringMatching(/^usage: rpcstack-usage --admin/) }));

  it.each([
    [["--file", "f", "--listen", "127.0.0.1:0"], "--admin is required"],
    [["--admin", "s", "--file", "f", "--listen", "nowhere"], '--listen must be ADDR:PORT (got "nowhere")'],
    [["--admin", "s", "--file", "f", "--listen", "127.0.0.1:0", "--interval-seconds", "0"], '--interval-seconds must be a number 0.1-3600 (got "0")'],
    [["--admin", "s", "--file", "f", "--listen", "127.0.0.1:0", "--verbose"], "Unknown option '--verbose'"],
  ])("%j: exit 2 saying why", async (argv, why) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.text).toContain(why);
  });

  it("refuses to start on a ledger it cannot read, and leaves it as it was", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, '{"version":1,"days":{"2026-11-27":{"a/eth/http":{"calls":');
    const r = await run(["--admin", sock, "--file", bad, "--listen", "127.0.0.1:0"]);
    expect(r.code).toBe(1);
    expect(r.text).toContain(`the usage ledger ${bad} is not JSON`);
    expect(readFileSync(bad, "utf8")).toBe('{"version":1,"days":{"2026-11-27":{"a/eth/http":{"calls":');
  });
});
