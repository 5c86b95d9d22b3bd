/**
 * A real Prometheus (Debian's) on the configuration the plan generates for the local stack with
 * monitoring on, scraping the real parts: geth built at the pin on its devnet command line, the
 * readiness service (readiness/cli.ts) on its sync-health command line, and the gateway on Debian's
 * HAProxy with the plan's chains. Docker's names in the plan are moved to loopback ports, nothing
 * else. Every dashboard panel's query must return data, and every alert rule's query must be valid
 * and name only metrics the stack exports.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/index.js";
import { planStack } from "../plan/index.js";
import { PROMETHEUS_CONFIG, PROMETHEUS_RULES } from "../services/monitoring.js";
import { USAGE_PORT } from "../services/usage.js";
import { ROOT, TEST_PROJECT_KEYS, encodeConfigValue, stackFileConfig } from "./harness.js";
import { clientBinary, onLoopback } from "../devtools/clients.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually } from "./support/http.js";
import { freePort, jsonRpc, start, stopEach, waitFor, type Child } from "./support/net.js";
import { startPrometheus, writeMonitoringFiles, type RunningPrometheus } from "./support/prometheus.js";

const TSX = join(ROOT, "node_modules/.bin/tsx");
const settings = loadConfig({
  entries: { ...stackFileConfig("local"), "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS), "rpcstack:monitoring": encodeConfigValue({ enabled: true, scrapeIntervalSeconds: 5 }) },
});
const plan = planStack(settings);
const monitoring = plan.monitoring!;
const KEY = TEST_PROJECT_KEYS[0].key;

/** PromQL's metric names: identifiers that are not functions, operators, or label lists. */
export function metricNames(expr: string): string[] {
  const bare = expr.replace(/"[^"]*"/g, "").replace(/\{[^}]*\}/g, " ").replace(/\[[^\]]*\]/g, " ").replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ");
  const words = bare.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*\()/g) ?? [];
  return [...new Set(words.filter((w) => !["by", "without", "on", "ignoring", "group_left", "group_right", "or", "and", "unless", "bool", "offset"].includes(w) && !/^[0-9]/.test(w)))];
}

let geth: Child;
let devnet: Child;
let health: Child;
let gw: RunningGateway;
let usage: Child;
let prom: RunningPrometheus;
let dir: string;
/** Docker's service addresses in the plan -> where this test runs them. */
const at: Record<string, string> = {};
const moved = (text: string) => Object.entries(at).reduce((t, [from, to]) => t.split(from).join(to), text);

beforeAll(() => void [clientBinary("geth"), clientBinary("starknet-devnet")], 60 * 60_000);

beforeAll(async () => {
  const [http, ws, metrics, rpc, sync] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
  Object.assign(at, { "geth:8545": `127.0.0.1:${http}`, "geth:8546": `127.0.0.1:${ws}`, "geth:6060": `127.0.0.1:${metrics}`, "starknet-devnet:5050": `127.0.0.1:${rpc}`, "sync-health:8080": `127.0.0.1:${sync}` });
  geth = start(clientBinary("geth"), onLoopback(plan.l1.services.execution!.command, { 8545: http, 8546: ws, 6060: metrics }));
  devnet = start(clientBinary("starknet-devnet"), ["--host", "127.0.0.1", ...onLoopback(plan.l2.services.node.command, { 5050: rpc })]);
  await waitFor("geth --dev", () => jsonRpc(`http://${at["geth:8545"]}`, "eth_chainId"));
  // sync-health as its container runs it, the bundled program replaced by its source.
  const [, , ...args] = plan.readiness.services.health.command;
  health = start(TSX, [join(ROOT, "readiness/cli.ts"), ...moved(args.join("\n")).replace(/--serve\n8080/, `--serve\n${sync}`).split("\n")], { cwd: ROOT });
  await waitFor("sync-health", async () => ((await fetch(`http://${at["sync-health:8080"]}/metrics`).catch(() => undefined))?.ok ? true : undefined)).catch((e) => {
    throw new Error(`${e.message}\n${health.output()}`);
  });
  gw = await startGateway(JSON.parse(moved(JSON.stringify(plan.gatewayConfig.chains))), TEST_PROJECT_KEYS, { cache: plan.gatewayConfig.options.cache });
  at["haproxy:8405"] = `127.0.0.1:${gw.metricsPort}`;
  // The usage keeper as its container runs it, on the gateway's runtime API.
  const usagePort = await freePort();
  at[`haproxy:${USAGE_PORT}`] = `127.0.0.1:${usagePort}`;
  usage = start(TSX, [join(ROOT, "usage/keeperMain.ts"), "--admin", join(gw.dir, "admin.sock"), "--file", join(gw.dir, "usage.json"), "--listen", at[`haproxy:${USAGE_PORT}`], "--interval-seconds", "1"], { cwd: ROOT });
  dir = writeMonitoringFiles(monitoring, { [PROMETHEUS_CONFIG]: moved(monitoring.files.find((f) => f.name === PROMETHEUS_CONFIG)!.content) });
  prom = await startPrometheus(dir);
  // Traffic as developers make it: answers, a cached read, a refused key.
  const relay = (key: string, method: string, params: unknown[] = []) =>
    fetch(`${gw.base}/gateway/${settings.network.chains.l1.path}/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) }).then((r) => r.text());
  await eventually("a relayed answer", () => relay(KEY, "eth_chainId"), (t) => t.includes('"result"'), 30_000);
  for (let i = 0; i < 5; i++) await Promise.all([relay(KEY, "eth_getBlockByNumber", ["0x0", false]), relay(KEY, "eth_blockNumber"), relay("x".repeat(40), "eth_blockNumber")]);
}, 120_000);

afterAll(async () => {
  await stopEach(prom, usage, gw, health, geth, devnet);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("Prometheus on the generated configuration, scraping the real parts", () => {
  it("scrapes every target the plan names, and each answers", async () => {
    const expected = monitoring.prometheus.jobs.flatMap((j) => j.targets.map(() => j.name)).sort();
    const targets = await eventually(
      "every target up",
      async () => ((await (await fetch(`${prom.url}/api/v1/targets`)).json()) as any).data.activeTargets as { labels: { job: string }; health: string; lastError: string }[],
      (ts) => ts.length === expected.length && ts.every((t) => t.health === "up"),
      60_000,
    ).catch((e) => { throw new Error(`${e.message}`); });
    expect(targets.map((t) => t.labels.job).sort()).toEqual(expected);
  }, 90_000);

  it("every panel of every dashboard returns data", async () => {
    const panels = monitoring.dashboards.flatMap((d) => d.panels.map((p) => [`${d.title} / ${p.title}`, p.expr] as const));
    expect(panels.length).toBeGreaterThan(5);
    const empty: string[] = [];
    for (const [title, expr] of panels) {
      // rate() needs two scrapes of a counter: up to a few intervals after the first.
      const r = await eventually(title, () => prom.query(expr), (a) => a.status !== "success" || (a.data?.result.length ?? 0) > 0, 45_000).catch(() => undefined);
      if (!r || r.status !== "success" || !r.data?.result.length) empty.push(`${title}: ${expr} -> ${JSON.stringify(r ?? "no data")}`);
    }
    expect(empty).toEqual([]);
  }, 240_000);

  it("every rule and panel names only metrics the scraped parts export, and each rule is valid PromQL", async () => {
    const names = new Set(((await (await fetch(`${prom.url}/api/v1/label/__name__/values`)).json()) as any).data as string[]);
    const rules = (await import("yaml")).parse(monitoring.files.find((f) => f.name === PROMETHEUS_RULES)!.content).groups[0].rules as { alert: string; expr: string }[];
    const exprs = [...rules.map((r) => [r.alert, r.expr] as const), ...monitoring.dashboards.flatMap((d) => d.panels.map((p) => [p.title, p.expr] as const))];
    const unknown = exprs.flatMap(([what, expr]) => metricNames(expr).filter((m) => !names.has(m)).map((m) => `${what}: ${m}`));
    expect(unknown).toEqual([]);
    for (const r of rules) expect((await prom.query(r.expr)).status, r.alert).toBe("success");
  }, 60_000);

  it("the check catches a panel naming a metric no part exports", async () => {
    expect(metricNames('sum by (proxy) (rate(haproxy_backend_http_requests_total{code="5xx"}[5m])) / clamp_min(rpcstack_cache_hits_total, 1e-9)')).toEqual(["haproxy_backend_http_requests_total", "rpcstack_cache_hits_total"]);
    const r = await prom.query("rpcstack_no_such_metric");
    expect(r.data?.result).toEqual([]);
  });
});
