/**
 * The stack's own pods on a real kubelet: `pulumi up` of the default (devnet) stack moved onto the
 * one-node cluster of test/support/kubeNode.ts, through the real Pulumi engine and the Kubernetes
 * provider built from its module, with `host.awaitReady` on. The images are the end-to-end test's
 * (devtools/images: real geth --dev and Starknet Devnet built from their registries, Debian's
 * HAProxy 3.2, Node.js, certbot, and Redis under Valkey's names for the counter store), imported
 * into the node's containerd: no registry is reached. Every pod turns Running and Ready and the
 * sync check Job ends synced before `pulumi up` returns; the gateway's replicas serve TLS through
 * the NodePort Service and relay JSON-RPC and a WebSocket subscription to geth and Starknet calls
 * to Devnet. A Prometheus of the cluster's own (the monitoring image's release, built from its Go
 * module) scrapes the pods with the job docs/kubernetes.md gives. Then what a cluster does to the
 * stack, under a steady client: a gateway pod deleted, the gateway rolled for a new key, `pulumi
 * destroy` and `up` again on the kept claims.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parse, stringify } from "yaml";
import { engineMissing } from "../devtools/docker.js";
import { buildTestImages, type TestImages } from "../devtools/images/build.js";
import { describeNotRun } from "./e2e/notRun.js";
import { withDevnetImages } from "./e2e/stackFiles.js";
import { parseReadinessLogs } from "../components/syncReadiness.js";
import { clusterScrapeConfig } from "../kubernetes/index.js";
import { scrapeJobs } from "../monitoring/targets.js";
import { planStack } from "../plan/index.js";
import { kubeStack } from "./support/kubeStack.js";
import { SYNC_HEALTH_PORT } from "../services/index.js";
import { ROOT, TEST_PROJECT_KEYS } from "./harness.js";
import { engineEnv, engineWithKubernetes, expectNoStackTrace, projectCopy, pulumiCli, type Engine } from "./support/engine.js";
import type { KubeObject } from "./support/kubeCluster.js";
import { startKubeNode, type KubeNode } from "./support/kubeNode.js";
import { freePort, waitFor } from "./support/net.js";

const STACK = "kubelet";
const NS = "rpcstack-pods";
const PASSPHRASE = "rpcstack-pods-test";
const KEY = TEST_PROJECT_KEYS[0].key;
/** The cluster's own Prometheus: its namespace and pod label, which the stack's metricsFrom admits. */
const MONITORING = { namespace: "monitoring", podLabels: { app: "prometheus" } };

interface Pod extends KubeObject {
  spec: { containers: { name: string; image: string }[] };
  status: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; image: string }[];
  };
}
const isReady = (p: Pod) => p.status.phase === "Running" && !!p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True");

/** The default stack file with its host replaced by the test's cluster and its images by the test's. */
function stackFile(images: TestImages, nodePort: number): string {
  const doc = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
  const config = withDevnetImages(doc.config, images);
  // A pod cannot set its open-file limit: its containers get containerd's. This VM holds every
  // process to 20,000 (no CAP_SYS_RESOURCE to raise it, where a systemd node gives containerd 2.x
  // 524,288), and HAProxy needs about 2 per connection: 9,000 fit (docs/kubernetes.md).
  config["rpcstack:gateway"] = { ...(config["rpcstack:gateway"] as object), maxConnections: 9000 };
  config["rpcstack:host"] = { kind: "kubernetes", namespace: NS, awaitReady: true, expose: { kind: "NodePort", nodePort }, counterStoreImage: images.valkey, metricsFrom: MONITORING };
  return stringify({ ...doc, config });
}

/** One HTTPS request to the gateway's NodePort: the devnet gateway's certificate is self-signed. */
function call(port: number, path: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", rejectUnauthorized: false, agent: false, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c) => (text += c)).on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
    // A connection sent to a pod that is gone would wait for the kernel's SYN retries (about 2 min);
    // a slow answer on a machine busy with a roll and other tests is still an answer.
    req.setTimeout(30_000, () => req.destroy(new Error("no answer in 30 s")));
    req.on("error", reject).end(JSON.stringify(body));
  });
}
const rpc = async (port: number, chain: string, method: string, params: unknown[] = []) => {
  const r = await call(port, `/gateway/${chain}/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method, params });
  expect(r.status, `${chain} ${method}: ${r.body}`).toBe(200);
  const parsed = JSON.parse(r.body) as { result?: unknown; error?: unknown };
  expect(parsed.error, `${chain} ${method}: ${r.body}`).toBeUndefined();
  return parsed.result;
};


/** Calls eth_blockNumber over a new TLS connection each time (kube-proxy picks a pod per connection) until stopped; counts what failed and why. */
function steadyClient(port: number, key: string, everyMs = 50) {
  let stopped = false;
  const failed: string[] = [];
  let ok = 0;
  let slowestMs = 0;
  const loop = (async () => {
    while (!stopped) {
      const t = Date.now();
      try {
        const r = await call(port, `/gateway/ethdev/rpc-http/${key}`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
        slowestMs = Math.max(slowestMs, Date.now() - t);
        if (r.status === 200 && /"result"/.test(r.body)) ok++;
        else failed.push(`${new Date().toISOString()} ${r.status} ${r.body.slice(0, 120)}`);
      } catch (e) {
        failed.push(`${new Date().toISOString()} ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (Date.now() - t))));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return { ok, failed, slowestMs };
    },
  };
}

const WHAT = "the devnet stack's pods on a real kubelet, through the real Pulumi engine";
const missing = engineMissing();
if (missing) describeNotRun(WHAT, missing);
else describe(WHAT, () => {
  let node: KubeNode | undefined;
  let engine: Engine;
  let images: TestImages;
  let project: string;
  let env: NodeJS.ProcessEnv;
  let nodePort: number;
  let upAt = 0;
  const dirs: string[] = [];
  const temp = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const { ok, okAsync } = pulumiCli(() => engine, () => project, () => env, { timeoutMs: 900_000, context: () => node?.logs().slice(-6000) ?? "" });
  /** The stack's serving pods (not the sync check's, which ends). */
  const pods = async () => (await node!.cluster.list<Pod>(`/api/v1/namespaces/${NS}/pods`)).filter((p) => !p.metadata.labels?.["job-name"]);

  beforeAll(async () => {
    engine = engineWithKubernetes();
    images = buildTestImages((s) => console.log(`kubelet test images: ${s}`));
    node = await startKubeNode();
    const t0 = Date.now();
    node.importImages([...new Set([images.geth, images.starknetDevnet, images.node, images.haproxy, images.certbot, images.valkey, images.prometheus])]);
    console.log(`images imported into the node's containerd in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // A port of the NodePort range that nothing on the host holds.
    nodePort = 30000 + ((await freePort()) % 2768);
    project = projectCopy(temp("rpcstack-pods-project-"), { [STACK]: stackFile(images, nodePort) });
    env = engineEnv(engine, temp("rpcstack-pods-home-"), { PULUMI_BACKEND_URL: `file://${temp("rpcstack-pods-state-")}`, PULUMI_CONFIG_PASSPHRASE: PASSPHRASE });
    // Made by the operator, as docs/kubernetes.md asks (a namespace the stack made would take the claims with it).
    await node.cluster.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    ok(["stack", "init", STACK]);
    ok(["config", "set", "--secret", "--stack", STACK, "rpcstack:kubeconfig"], node.cluster.kubeconfig);
    ok(["config", "set", "--secret", "--stack", STACK, "rpcstack:projectKeys"], JSON.stringify(TEST_PROJECT_KEYS));
  }, 30 * 60_000);

  // The cluster goes with everything on it (destroy is a test of its own above).
  afterAll(async () => {
    try {
      await node?.stop();
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }, 300_000);

  it("pulumi up with awaitReady: the engine waits for the pods, and every pod of the stack is Running and Ready with no restart", { timeout: 900_000 }, async () => {
    const t0 = Date.now();
    const upOutput = ok(["up", "--yes", "--skip-preview", "--stack", STACK]);
    upAt = Date.now();
    console.log(`pulumi up on the kubelet took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    expectNoStackTrace(upOutput);
    // The provider returned only once every StatefulSet's and Deployment's pods were ready: the test
    // does not wait on its own.
    const ready = await pods();
    expect(ready.filter((p) => !isReady(p)).map((p) => [p.metadata.name, p.status.phase, p.status.containerStatuses]), "pods not Ready when pulumi up returned").toEqual([]);
    const names = ready.map((p) => p.metadata.name.replace(/-[a-z0-9]{8,10}-[a-z0-9]{5}$/, "-*")).sort();
    expect(names).toEqual(["counters-*", "gateway-0", "gateway-1", "geth-0", "indexer-*", "starknet-devnet-0", "sync-health-*"]);
    for (const p of ready) expect((p.status.containerStatuses ?? []).map((c) => c.restartCount), p.metadata.name).toEqual(p.spec.containers.map(() => 0));
    // The sync check ran after the nodes as a Job, which the engine waited for: it ended synced.
    const job = await node!.cluster.get<KubeObject>(`/apis/batch/v1/namespaces/${NS}/jobs/sync-check`);
    expect(job.status.succeeded, JSON.stringify(job.status)).toBe(1);
    const [checkPod] = await node!.cluster.list<Pod>(`/api/v1/namespaces/${NS}/pods?labelSelector=job-name%3Dsync-check`);
    const report = (await node!.cluster.get<{ message: string }>(`/api/v1/namespaces/${NS}/pods/${checkPod.metadata.name}/log`)).message;
    const result = parseReadinessLogs(report);
    expect(result, report).toMatchObject({ synced: true });
    // Real geth (the image built from its Go module) runs in the geth StatefulSet.
    expect(ready.find((p) => p.metadata.name === "geth-0")!.spec.containers.map((c) => c.image)).toEqual([images.geth]);
  });

  it("the gateway serves TLS through the NodePort Service and relays JSON-RPC to geth and Starknet Devnet; the L1 head moves", { timeout: 120_000 }, async () => {
    // Ready pods serve RPC; each gateway replica relays to a node once its own check of the node's
    // sync passes (sync-health): until both have, calls through the Service get 503 now and then.
    for (const [chain, method] of [["ethdev", "eth_blockNumber"], ["strkdev", "starknet_blockNumber"]]) {
      let inRow = 0;
      await waitFor(`${chain} in both gateway replicas' rotation (10 answers in a row)`, async () => {
        inRow = (await call(nodePort, `/gateway/${chain}/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method, params: [] })).status === 200 ? inRow + 1 : 0;
        return inRow >= 10 ? true : undefined;
      }, 90_000).catch(async (e) => {
        const svc = await node!.cluster.get<KubeObject>(`/api/v1/namespaces/${NS}/services/sync-health`);
        const health = await fetch(`http://${svc.spec.clusterIP}:${SYNC_HEALTH_PORT}/ready`).then(async (r) => `${r.status} ${await r.text()}`, (x) => String(x));
        throw new Error(`${(e as Error).message}; sync-health /ready: ${health}`);
      });
      console.log(`${chain} relayed ${((Date.now() - upAt) / 1000).toFixed(1)} s after pulumi up returned`);
    }
    const first = Number(await rpc(nodePort, "ethdev", "eth_blockNumber"));
    expect(await rpc(nodePort, "ethdev", "eth_chainId")).toBe("0x539");
    expect(await rpc(nodePort, "strkdev", "starknet_chainId")).toMatch(/^0x/);
    expect(typeof (await rpc(nodePort, "strkdev", "starknet_blockNumber"))).toBe("number");
    const later = await waitFor("a newer L1 head", async () => {
      const n = Number(await rpc(nodePort, "ethdev", "eth_blockNumber"));
      return n > first ? n : undefined;
    }, 30_000);
    expect(later).toBeGreaterThan(first);
    // A wrong key is refused by the gateway itself.
    const wrong = await call(nodePort, `/gateway/ethdev/rpc-http/${"x".repeat(36)}`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
    expect(wrong.status).toBe(401);
  });

  it("a WebSocket subscription through the gateway's Service receives geth's new heads", { timeout: 60_000 }, async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${nodePort}/gateway/ethdev/rpc/${KEY}`, { rejectUnauthorized: false });
    try {
      const heads = await new Promise<number[]>((resolve, reject) => {
        const got: number[] = [];
        const t = setTimeout(() => reject(new Error(`only ${got.length} new heads in 20 s`)), 20_000);
        ws.on("error", reject);
        ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] })));
        ws.on("message", (data) => {
          const m = JSON.parse(String(data)) as { id?: number; result?: string; error?: unknown; params?: { result: { number: string } } };
          if (m.id === 1 && !m.result) return reject(new Error(`eth_subscribe: ${String(data)}`));
          if (m.params) got.push(Number(m.params.result.number));
          if (got.length >= 2) (clearTimeout(t), resolve(got));
        });
      });
      expect(heads[1]).toBeGreaterThan(heads[0]);
    } finally {
      ws.close();
    }
  });
  it("the cluster's own Prometheus (the monitoring image's release) scrapes every job rpcstack's dashboards read, by the Services' annotations and labels", { timeout: 180_000 }, async () => {
    const kube = node!.cluster;
    const MON = MONITORING.namespace;
    const rbac = "/apis/rbac.authorization.k8s.io/v1";
    await kube.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: MON } });
    await kube.create(`/api/v1/namespaces/${MON}/serviceaccounts`, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "prometheus", namespace: MON } });
    await kube.create(`${rbac}/clusterroles`, {
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "rpcstack-test-prometheus" },
      rules: [{ apiGroups: [""], resources: ["services", "endpoints", "pods"], verbs: ["get", "list", "watch"] }, { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] }],
    } as KubeObject);
    await kube.create(`${rbac}/clusterrolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "rpcstack-test-prometheus" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "rpcstack-test-prometheus" },
      subjects: [{ kind: "ServiceAccount", name: "prometheus", namespace: MON }],
    } as KubeObject);
    // The job docs/kubernetes.md gives the operator's Prometheus, scraping every 2 s here.
    const config = stringify({ global: { scrape_interval: "2s" }, scrape_configs: [clusterScrapeConfig(NS, 2)] });
    await kube.create(`/api/v1/namespaces/${MON}/configmaps`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "prometheus", namespace: MON }, data: { "prometheus.yml": config } } as KubeObject);
    const deployment = `/apis/apps/v1/namespaces/${MON}/deployments`;
    await kube.create(deployment, {
      apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "prometheus", namespace: MON },
      spec: {
        replicas: 1, selector: { matchLabels: MONITORING.podLabels },
        template: {
          metadata: { labels: MONITORING.podLabels },
          spec: {
            serviceAccountName: "prometheus",
            containers: [{
              name: "prometheus", image: images.prometheus, imagePullPolicy: "Never",
              args: ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus", "--web.listen-address=0.0.0.0:9090"],
              volumeMounts: [{ name: "config", mountPath: "/etc/prometheus" }, { name: "data", mountPath: "/prometheus" }],
              readinessProbe: { httpGet: { path: "/-/ready", port: 9090 }, periodSeconds: 2 },
            }],
            volumes: [{ name: "config", configMap: { name: "prometheus" } }, { name: "data", emptyDir: {} }],
          },
        },
      },
    } as KubeObject);
    const promPods = () => kube.list<Pod>(`/api/v1/namespaces/${MON}/pods?labelSelector=app%3Dprometheus`);
    const promLog = async () => {
      const [p] = await promPods();
      return p ? `${JSON.stringify(p.status.containerStatuses)}\n${(await kube.get<{ message: string }>(`/api/v1/namespaces/${MON}/pods/${p.metadata.name}/log`).catch((x) => ({ message: String(x) }))).message}` : "no pod";
    };
    try {
      const prom = await waitFor("Prometheus's pod Ready", async () => {
        const [p] = await promPods();
        return p && isReady(p) ? (p.status as { podIP: string }).podIP : undefined;
      }, 90_000).catch(async (e) => {
        throw new Error(`${(e as Error).message}: ${await promLog()}`);
      });
      const api = async (path: string) => ((await (await fetch(`http://${prom}:9090/api/v1/${path}`)).json()) as { data: any }).data;
      // What rpcstack's own Prometheus scrapes for this stack (monitoring/targets.ts): the jobs its dashboards read.
      const settings = kubeStack("local", { host: { namespace: NS } });
      const jobs = scrapeJobs(settings, planStack(settings)).map((j) => j.name).filter((j) => j !== "disk").sort();
      expect(jobs.length).toBeGreaterThan(2);
      let last: unknown;
      const up = await waitFor(`every target of ${jobs.join(", ")} up`, async () => {
        const targets = (await api("targets")).activeTargets as { labels: Record<string, string>; health: string; lastError: string; scrapeUrl: string }[];
        last = targets.map((t) => [t.labels.job, t.scrapeUrl, t.health, t.lastError]);
        const seen = [...new Set(targets.map((t) => t.labels.job))].sort();
        return seen.join() === jobs.join() && targets.every((t) => t.health === "up") ? targets : undefined;
      }, 90_000).catch(async (e) => {
        throw new Error(`${(e as Error).message}: ${JSON.stringify(last)}\n${await promLog()}`);
      });
      console.log(`the cluster's Prometheus scrapes ${up.length} targets, all up: ${up.map((t) => `${t.labels.job} ${t.scrapeUrl}`).join(", ")}`);
      // Both gateway replicas; a dashboard's query (monitoring/dashboards.ts) has data, by its labels.
      expect(up.filter((t) => t.labels.job === "gateway").length).toBe(2);
      const inRotation = await waitFor("sum by (chain) (rpcstack_node_in_rotation)", async () => {
        const r = (await api(`query?query=${encodeURIComponent("sum by (chain) (rpcstack_node_in_rotation)")}`)).result as { metric: { chain: string }; value: [number, string] }[];
        return r.length >= 2 ? r : undefined;
      }, 30_000);
      expect(Object.fromEntries(inRotation.map((r) => [r.metric.chain, r.value[1]]))).toEqual({ ethdev: "1", strkdev: "1" });
    } finally {
      // Its scrapes every 2 s would load the machine under the steady clients of the tests below.
      await kube.delete(`${deployment}/prometheus`);
    }
  });

  /** Each gateway replica's usage ledger, read from its keeper (port 9107 on the pod's address). */
  const ledgers = async () => {
    const out: Record<string, { uid: string; ledger: string; calls: number }> = {};
    for (const p of (await pods()).filter((x) => /^gateway-\d$/.test(x.metadata.name))) {
      const u = (await (await fetch(`http://${(p.status as { podIP: string }).podIP}:9107/usage?key=${TEST_PROJECT_KEYS[0].name}`)).json()) as { ledger: string; rows: { calls: number }[] };
      out[p.metadata.name] = { uid: p.metadata.uid!, ledger: u.ledger, calls: u.rows.reduce((n, r) => n + r.calls, 0) };
    }
    return out;
  };
  const gatewayReady = (name: string, not: string) =>
    waitFor(`${name} Ready again`, async () => {
      const p = (await pods()).find((x) => x.metadata.name === name);
      return p && p.metadata.uid !== not && isReady(p) ? p : undefined;
    }, 180_000);

  it("a gateway pod deleted under a steady client comes back on its own claim with its usage ledger; the other replica serves meanwhile", { timeout: 300_000 }, async () => {
    const before = await ledgers();
    expect(Object.keys(before).sort()).toEqual(["gateway-0", "gateway-1"]);
    expect(before["gateway-0"].ledger).not.toBe(before["gateway-1"].ledger);
    const client = steadyClient(nodePort, KEY);
    await new Promise((r) => setTimeout(r, 3_000));
    const t0 = Date.now();
    await node!.cluster.delete(`/api/v1/namespaces/${NS}/pods/gateway-0`);
    await gatewayReady("gateway-0", before["gateway-0"].uid);
    console.log(`gateway-0 Ready again ${((Date.now() - t0) / 1000).toFixed(1)} s after its deletion`);
    await new Promise((r) => setTimeout(r, 3_000));
    const { ok, failed, slowestMs } = await client.stop();
    console.log(`steady client across the deletion: ${ok} answered (the slowest in ${slowestMs} ms), ${failed.length} failed${failed.length ? `:\n${failed.join("\n")}` : ""}`);
    const after = await ledgers();
    // The same claim: the same ledger, with what it had counted.
    expect(after["gateway-0"].ledger).toBe(before["gateway-0"].ledger);
    expect(after["gateway-0"].calls).toBeGreaterThanOrEqual(before["gateway-0"].calls);
    // The deleted replica serves on until kube-proxy has left it out, then stops softly (preStop).
    expect(failed).toEqual([]);
    expect(ok).toBeGreaterThan(50);
  });

  it("a project key added: the gateway rolls replica by replica, a steady client on an existing key sees no failed call, and the new key is served by both", { timeout: 600_000 }, async () => {
    const added = { name: "ci-added", key: randomBytes(32).toString("base64url") };
    const before = Object.fromEntries((await pods()).filter((p) => /^gateway-\d$/.test(p.metadata.name)).map((p) => [p.metadata.name, p.metadata.uid]));
    const client = steadyClient(nodePort, KEY);
    // What the gateway's pods go through, with times, to read beside a failed call.
    const seen: string[] = [];
    let watching = true;
    const watch = (async () => {
      let last = "";
      while (watching) {
        const now = (await pods().catch(() => [])).filter((p) => /^gateway-\d$/.test(p.metadata.name))
          .map((p) => `${p.metadata.name} ${p.metadata.uid!.slice(0, 4)} ${p.status.phase}${isReady(p) ? " ready" : ""}${(p.metadata as { deletionTimestamp?: string }).deletionTimestamp ? " terminating" : ""}`).sort().join(", ");
        if (now !== last) seen.push(`${new Date().toISOString()} ${(last = now)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    await new Promise((r) => setTimeout(r, 2_000));
    ok(["config", "set", "--secret", "--stack", STACK, "rpcstack:projectKeys"], JSON.stringify([...TEST_PROJECT_KEYS, added]));
    const t0 = Date.now();
    await okAsync(["up", "--yes", "--skip-preview", "--stack", STACK]);
    console.log(`pulumi up with the added key (the gateway's roll awaited) took ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    await new Promise((r) => setTimeout(r, 2_000));
    const { ok: answered, failed, slowestMs } = await client.stop();
    watching = false;
    await watch;
    console.log(`steady client across the roll: ${answered} answered (the slowest in ${slowestMs} ms), ${failed.length} failed${failed.length ? `:\n${failed.join("\n")}\nthe gateway's pods:\n${seen.join("\n")}` : ""}`);
    const after = await pods();
    // Both replicas replaced, and Ready when pulumi up returned.
    for (const name of ["gateway-0", "gateway-1"]) {
      const p = after.find((x) => x.metadata.name === name)!;
      expect(p.metadata.uid, name).not.toBe(before[name]);
      expect(isReady(p), name).toBe(true);
    }
    expect(failed).toEqual([]);
    expect(answered).toBeGreaterThan(50);
    // The new key on every connection (either replica): 10 in a row.
    for (let i = 0; i < 10; i++) {
      const r = await call(nodePort, `/gateway/ethdev/rpc-http/${added.key}`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] });
      expect(r.status, r.body).toBe(200);
    }
  });

  it("pulumi destroy leaves the gateway's usage claims, and the next up mounts them: each replica's ledger keeps its counts", { timeout: 600_000 }, async () => {
    const claims = async () => (await node!.cluster.list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`)).map((c) => `${c.metadata.name} ${c.metadata.uid}`).sort();
    const before = await ledgers();
    const held = await claims();
    expect(held.map((c) => c.split(" ")[0])).toEqual(["usage-gateway-0", "usage-gateway-1"]);
    ok(["destroy", "--yes", "--skip-preview", "--stack", STACK]);
    await waitFor("the stack's pods gone", async () => ((await pods()).length === 0 ? true : undefined), 120_000);
    expect(await claims()).toEqual(held);
    ok(["up", "--yes", "--skip-preview", "--stack", STACK]);
    expect(await claims()).toEqual(held);
    const after = await ledgers();
    for (const name of ["gateway-0", "gateway-1"]) {
      expect(after[name].ledger, name).toBe(before[name].ledger);
      expect(after[name].calls, name).toBeGreaterThanOrEqual(before[name].calls);
    }
    // geth --dev starts a new chain (the devnet keeps none); the gateway relays again once it is checked.
    await waitFor("a relay after the new up", async () => ((await call(nodePort, `/gateway/ethdev/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] })).status === 200 ? true : undefined), 90_000);
  });
});
