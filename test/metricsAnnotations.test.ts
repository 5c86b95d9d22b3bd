/**
 * What a cluster's Prometheus is told to scrape: every prometheus.io annotation names a port of its
 * Service and a path the software behind that port serves, for every client a stack deploys; and
 * no metrics port is left without one. The paths are checked against the clients' own docs here
 * (a table of this test's, not the plan's), and against the real geth and the real HAProxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RpcStackConfig } from "../config/index.js";
import { renderCluster, type K8sObject } from "../kubernetes/index.js";
import { planStack } from "../plan/index.js";
import { clientBinary } from "../devtools/clients.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { kubeStack } from "./support/kubeStack.js";
import { freePort, start, waitFor } from "./support/net.js";

/**
 * Where each image serves Prometheus text, as its project documents it: go-ethereum's metrics
 * server (metrics/exp) at /debug/metrics/prometheus; Lighthouse's, Juno's and Pathfinder's monitor
 * at /metrics; the gateway's listener at /metrics (HAProxy's exporter) and /metrics/cache (the
 * cache's counters); rpcstack's own programs (sync health, usage keeper) at /metrics.
 */
const SERVED: Readonly<Record<string, readonly string[]>> = {
  "ethereum/client-go": ["/debug/metrics/prometheus"],
  "sigp/lighthouse": ["/metrics"],
  "nethermind/juno": ["/metrics"],
  "swmansion/pathfinder": ["/metrics"],
  haproxy: ["/metrics", "/metrics/cache"],
  node: ["/metrics"],
};
const repository = (image: string) => image.replace(/[:@].*$/, "");

function objects(s: RpcStackConfig): K8sObject[] {
  if (s.host.kind !== "kubernetes") throw new Error("not a cluster");
  const plan = planStack(s);
  return renderCluster<string>({ plan, settings: s, host: s.host, generated: { gateway: [], keys: [] }, content: () => "", secretValue: () => "" }).map((r) => r.object);
}

/** Per annotated Service: its port and path, and the image of the container that has that port. */
function scrapes(os: K8sObject[]) {
  const pods = os.filter((o) => o.kind === "StatefulSet" || o.kind === "Deployment") as any[];
  return (os.filter((o) => o.kind === "Service" && o.metadata.annotations?.["prometheus.io/scrape"] === "true") as any[]).map((svc) => {
    const port = Number(svc.metadata.annotations["prometheus.io/port"]);
    const pod = pods.find((p) => Object.entries(svc.spec.selector).every(([k, v]) => p.spec.template.metadata.labels[k] === v));
    const container = pod?.spec.template.spec.containers.find((c: any) => c.ports?.some((p: any) => p.containerPort === port));
    return { service: svc.metadata.name as string, port, path: svc.metadata.annotations["prometheus.io/path"] as string, servicePorts: svc.spec.ports.map((p: any) => p.port) as number[], image: container?.image as string | undefined };
  });
}

const STACKS: [string, RpcStackConfig][] = [
  ["testnet (geth, Lighthouse, Juno)", kubeStack("testnet")],
  ["testnet with Pathfinder", kubeStack("testnet", { extra: { l2: { client: "pathfinder" } } })],
  ["testnet, two nodes per layer", kubeStack("testnet", { extra: { nodes: { l1: ["main", "main"], l2: ["main", "main"] } } })],
  ["local (geth --dev, Starknet Devnet)", kubeStack("local")],
];

describe.each(STACKS)("metrics annotations on a cluster: %s", (_label, stack) => {
  const os = objects(stack);

  it("each names a port of its Service and a path the container behind that port serves", () => {
    const found = scrapes(os);
    expect(found.length).toBeGreaterThan(2);
    for (const x of found) {
      expect(x.servicePorts, x.service).toContain(x.port);
      expect(x.image, `${x.service}: no container has port ${x.port}`).toBeDefined();
      expect(SERVED[repository(x.image!)] ?? [], `${x.service} (${x.image}) at ${x.path}`).toContain(x.path);
    }
  });

  it("every port that serves metrics is scraped, and no pod template carries a second copy", () => {
    const scraped = new Set(scrapes(os).map((x) => `${x.image}:${x.port}`));
    const pods = os.filter((o) => o.kind === "StatefulSet" || o.kind === "Deployment") as any[];
    for (const p of pods) {
      expect(p.spec.template.metadata.annotations?.["prometheus.io/scrape"], p.metadata.name).toBeUndefined();
      for (const c of p.spec.template.spec.containers) {
        for (const port of (c.ports ?? []).filter((x: any) => x.name.startsWith("metrics-"))) expect(scraped, `${c.name}:${port.containerPort}`).toContain(`${c.image}:${port.containerPort}`);
      }
    }
  });
});

it("on a cluster, Lighthouse, the rotation gauges, the usage keeper and the cache's counters are scraped too", () => {
  const found = scrapes(objects(kubeStack("testnet")));
  const by = (image: string, path: string) => found.filter((x) => repository(x.image ?? "") === image && x.path === path).map((x) => x.service);
  expect(by("sigp/lighthouse", "/metrics")).toEqual(["lighthouse"]);
  expect(by("haproxy", "/metrics/cache")).toHaveLength(1);
  expect(found.map((x) => x.port)).toEqual(expect.arrayContaining([8080, 9107, 8405]));
  const pathfinder = scrapes(objects(kubeStack("testnet", { extra: { l2: { client: "pathfinder" } } })));
  expect(pathfinder.find((x) => repository(x.image ?? "") === "swmansion/pathfinder")).toMatchObject({ port: 9099, path: "/metrics" });
});

describe("the annotated paths, asked of the real software", () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://127.0.0.1:9" } }], [{ name: "a", key: "k".repeat(32) }], { cache: { maxBytes: 1 << 20, maxObjectBytes: 1 << 20, pollIntervalMs: 60_000 } });
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
  });

  it("geth serves Prometheus text at its annotated path, and nothing at /metrics", async () => {
    const path = scrapes(objects(kubeStack("testnet"))).find((x) => x.service === "geth")!.path;
    const [http, metrics, auth, p2p] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const geth = start(clientBinary("geth"), [
      "--dev", "--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", String(p2p), "--verbosity", "1",
      "--http", "--http.addr", "127.0.0.1", "--http.port", String(http), "--authrpc.addr", "127.0.0.1", "--authrpc.port", String(auth),
      "--metrics", "--metrics.addr", "127.0.0.1", `--metrics.port=${metrics}`,
    ]);
    try {
      const text = await waitFor("geth's metrics server", async () => {
        const r = await fetch(`http://127.0.0.1:${metrics}${path}`).catch(() => undefined);
        return r?.ok ? r.text() : undefined;
      }, 60_000);
      expect(text).toMatch(/^# TYPE chain_head_block gauge$/m);
      expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status).toBe(404);
    } finally {
      await geth.stop();
    }
  }, 90_000);

  it("the gateway's listener serves Prometheus text at each path annotated on its port", async () => {
    const paths = scrapes(objects(kubeStack("testnet"))).filter((x) => repository(x.image ?? "") === "haproxy" && x.port === 8405).map((x) => x.path);
    expect(paths.sort()).toEqual(["/metrics", "/metrics/cache"]);
    for (const path of paths) {
      const r = await fetch(`http://127.0.0.1:${gw.metricsPort}${path}`);
      expect(r.status, path).toBe(200);
      expect(await r.text(), path).toMatch(/^# (HELP|TYPE) \S+/m);
    }
  });
});
