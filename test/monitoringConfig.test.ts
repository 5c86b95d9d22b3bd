/** rpcstack:monitoring: on where a host serves the public, wrong values refused naming the key, and what the plan and the compose export make of it. */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { placeFiles } from "../services/index.js";
import { exportCompose, DASHBOARD_DIR, MONITORING_FILE } from "../export/compose.js";
import { planStack } from "../plan/index.js";
import { TEST_PROJECT_KEYS, TEST_SSH_PRIVATE_KEY } from "./harness.js";
import { loadRaw, problemsOf } from "./support/rawConfig.js";

const ssh = { kind: "ssh", address: "203.0.113.10", user: "rpcstack", port: 22 };
const base = (monitoring?: unknown, host: unknown = ssh) => ({
  network: "testnet",
  tier: "recommended",
  host,
  ...(host === ssh ? { gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com" } } : {}),
  projectKeys: TEST_PROJECT_KEYS,
  ...(host === ssh ? { sshPrivateKey: TEST_SSH_PRIVATE_KEY } : {}),
  ...(monitoring === undefined ? {} : { monitoring }),
});

describe("rpcstack:monitoring", () => {
  it("is on for a public host with its defaults, off for local unless switched on", () => {
    expect(loadRaw(base()).monitoring).toEqual({ prometheusImage: "prom/prometheus:v3.5.0", retentionDays: 30, retentionGB: 20, scrapeIntervalSeconds: 15, port: 9090 });
    expect(loadRaw(base({ enabled: false })).monitoring).toBeUndefined();
    expect(loadRaw(base(undefined, { kind: "local" })).monitoring).toBeUndefined();
    expect(loadRaw(base({ enabled: true, port: 19090 }, { kind: "local" })).monitoring?.port).toBe(19090);
  });

  it.each([
    ["a retention of zero days", { retentionDays: 0 }, "rpcstack:monitoring.retentionDays", />= 1/],
    ["a retention given as text", { retentionGB: "20GB" }, "rpcstack:monitoring.retentionGB", /integer/],
    ["a scrape every second", { scrapeIntervalSeconds: 1 }, "rpcstack:monitoring.scrapeIntervalSeconds", />= 5/],
    ["a privileged port", { port: 80 }, "rpcstack:monitoring.port", />= 1024/],
    ["a moving image tag", { prometheusImage: "prom/prometheus latest" }, "rpcstack:monitoring.prometheusImage", /image reference like "prom\/prometheus:v3.5.0"/],
    ["an unknown key", { password: "x" }, "rpcstack:monitoring.password", /not a known key/],
    ["Grafana on Prometheus's port", { grafanaImage: "grafana/grafana:12.1.1", grafanaPort: 9090 }, "rpcstack:monitoring.grafanaPort", /the port Prometheus takes \(monitoring.port\)/],
    ["a Grafana image without a pinned tag", { grafanaImage: "grafana/grafana" }, "rpcstack:monitoring.grafanaImage", /pinned image reference/],
  ])("refuses %s, naming the key", (_label, monitoring, key, why) => {
    expect(problemsOf(base(monitoring)).find((p) => p.startsWith(key))).toMatch(why);
  });

  it("counts the retention in the disk check, with the key to lower it", () => {
    const problems = problemsOf({ ...base({ retentionGB: 5000 }), host: { ...ssh, diskGB: 2000 } });
    expect(problems.join("\n")).toMatch(/5000 GB of metrics \(rpcstack:monitoring\.retentionGB\)/);
  });
});

describe("monitoring in the plan", () => {
  const plan = planStack(loadRaw(base({ retentionDays: 7, retentionGB: 15 })));
  const m = plan.monitoring!;
  const prom = m.role.services.prometheus;

  it("Prometheus keeps what the configuration says, on its own volume, reachable on the host's loopback only", () => {
    expect(prom.command).toEqual(expect.arrayContaining(["--storage.tsdb.retention.time=7d", "--storage.tsdb.retention.size=15GB"]));
    expect(prom.ports.map((p) => p.publish)).toEqual([{ address: "127.0.0.1", port: 9090 }]);
    expect(m.role.volumes.map((v) => v.name)).toEqual(["rpcstack-prometheus"]);
  });

  it("scrapes each node client at the metrics flags its spec passes, the readiness service, the disk watcher, the gateway and the usage keeper", () => {
    const jobs = Object.fromEntries(m.prometheus.jobs.map((j) => [j.name, j.targets.map((t) => `${t.address}${j.metricsPath}`)]));
    expect(jobs).toEqual({
      geth: ["geth:6060/debug/metrics/prometheus"],
      lighthouse: ["lighthouse:5054/metrics"],
      juno: ["juno:9090/metrics"],
      rotation: ["sync-health:8080/metrics"],
      disk: ["disk-watch:9105/metrics"],
      gateway: ["haproxy:8405/metrics"],
      "gateway-cache": ["haproxy:8405/metrics/cache"],
      usage: ["haproxy:9107/metrics"],
    });
    const flags = [...(plan.l1.services.execution?.command ?? []), ...(plan.l1.services.consensus?.command ?? []), ...plan.l2.services.node.command];
    expect(flags).toEqual(expect.arrayContaining(["--metrics.port=6060", "--metrics-port=5054", "--metrics-port=9090"]));
  });

  it("Pathfinder is scraped on its monitor address", () => {
    const p = planStack(loadRaw({ ...base(), l2: { client: "pathfinder" } })).monitoring!;
    expect(p.prometheus.jobs.find((j) => j.name === "pathfinder")?.targets.map((t) => t.address)).toEqual(["pathfinder:9099"]);
  });

  it("puts no project key into any generated file, and the compose export writes Prometheus and the dashboards", () => {
    const out = exportCompose(loadRaw(base()), { projectKeys: TEST_PROJECT_KEYS });
    const texts = [...m.files.map((f) => f.content), ...Object.values(m.dashboardFiles), out.files[MONITORING_FILE]];
    for (const k of TEST_PROJECT_KEYS) for (const t of texts) expect(t).not.toContain(k.key);
    expect(out.files[MONITORING_FILE]).toContain("127.0.0.1:9090:9090/tcp");
    expect(out.mounted.map((f) => f.path)).toEqual(expect.arrayContaining(["monitoring/prometheus.yml", "monitoring/rpcstack-alerts.yml", `${DASHBOARD_DIR}/rpcstack-relays.json`, `${DASHBOARD_DIR}/rpcstack-nodes.json`]));
  });
});

describe("Grafana, where an image is named", () => {
  it("is absent unless named", () => {
    expect(planStack(loadRaw(base())).monitoring!.role.services.grafana).toBeUndefined();
  });

  it("runs on the host's loopback with Prometheus as its data source and the dashboards provisioned where its provider looks", () => {
    const m = planStack(loadRaw(base({ grafanaImage: "grafana/grafana:12.1.1", grafanaPort: 13000 }))).monitoring!;
    const g = m.role.services.grafana!;
    expect(g.ports.map((p) => p.publish)).toEqual([{ address: "127.0.0.1", port: 13000 }]);
    const files = Object.fromEntries(placeFiles(g, { grafana: m.grafanaFiles }).map((f) => [f.path, f.from === "generated" ? f.content : ""]));
    const ds = parse(files["/etc/grafana/provisioning/datasources/rpcstack.yml"]).datasources;
    expect(ds).toEqual([expect.objectContaining({ type: "prometheus", uid: "prometheus", url: "http://prometheus:9090" })]);
    const dir = parse(files["/etc/grafana/provisioning/dashboards/rpcstack.yml"]).providers[0].options.path;
    const boards = Object.keys(files).filter((f) => f.endsWith(".json"));
    expect(boards.map((f) => f.slice(0, f.lastIndexOf("/")))).toEqual([dir, dir]);
    // Every panel reads the provisioned data source.
    for (const f of boards) for (const p of JSON.parse(files[f]).panels) expect(p.datasource.uid).toBe(ds[0].uid);
    const out = exportCompose(loadRaw(base({ grafanaImage: "grafana/grafana:12.1.1" })), { projectKeys: TEST_PROJECT_KEYS });
    expect(parse(out.files[MONITORING_FILE]).services.grafana.ports).toEqual(["127.0.0.1:3000:3000/tcp"]);
    expect(out.mounted.filter((f) => f.path.startsWith(`${DASHBOARD_DIR}/`))).toHaveLength(2);
  });
});
