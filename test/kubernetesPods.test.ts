/**
 * The stack's own pods on a real kubelet: `pulumi up` of the default (devnet) stack moved onto the
 * one-node cluster of test/support/kubeNode.ts, through the real Pulumi engine and the Kubernetes
 * provider built from its module, with `host.awaitReady` on. The images are the end-to-end test's
 * (devtools/images: real geth --dev and Starknet Devnet built from their registries, Debian's
 * HAProxy 3.2, Node.js, certbot, and Redis under Valkey's names for the counter store), imported
 * into the node's containerd: no registry is reached. Every pod turns Running and Ready, the
 * gateway's replicas serve TLS through the NodePort Service and relay JSON-RPC and a WebSocket
 * subscription to geth and Starknet calls to Devnet, with the nodes gated by the sync checks.
 */
import { spawnSync } from "node:child_process";
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
import { SYNC_HEALTH_PORT } from "../services/index.js";
import { ROOT, TEST_PROJECT_KEYS } from "./harness.js";
import { engineEnv, expectNoStackTrace, findEngine, projectCopy, type Engine } from "./support/engine.js";
import type { KubeObject } from "./support/kubeCluster.js";
import { startKubeNode, type KubeNode } from "./support/kubeNode.js";
import { freePort, waitFor } from "./support/net.js";

const STACK = "kubelet";
const NS = "rpcstack-pods";
const PASSPHRASE = "rpcstack-pods-test";
const KEY = TEST_PROJECT_KEYS[0].key;

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
  config["rpcstack:host"] = { kind: "kubernetes", namespace: NS, awaitReady: true, expose: { kind: "NodePort", nodePort }, counterStoreImage: images.valkey };
  return stringify({ ...doc, config });
}

/** One HTTPS request to the gateway's NodePort: the devnet gateway's certificate is self-signed. */
function call(port: number, path: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", rejectUnauthorized: false, agent: false, headers: { "content-type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (c) => (text += c)).on("end", () => resolve({ status: res.statusCode!, body: text }));
    });
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
  let upOutput = "";
  let upAt = 0;
  const dirs: string[] = [];
  const temp = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const pulumi = (args: string[], input?: string) => {
    const r = spawnSync(join(engine.bin, "pulumi"), [...args, "--non-interactive"], { cwd: project, env, input, encoding: "utf8", timeout: 900_000, maxBuffer: 64 << 20 });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  const ok = (args: string[], input?: string) => {
    const r = pulumi(args, input);
    expect(r.status, `pulumi ${args.join(" ")}:\n${r.out}\n${node?.logs().slice(-6000) ?? ""}`).toBe(0);
    return r.out;
  };
  const pods = () => node!.cluster.list<Pod>(`/api/v1/namespaces/${NS}/pods`);

  beforeAll(async () => {
    const found = findEngine();
    if ("missing" in found) throw new Error(found.missing);
    const k8s = found.manifest.plugins.kubernetes;
    if (!k8s?.built) throw new Error(`the engine has no kubernetes plugin: ${k8s?.note ?? "not in engine.json"}`);
    engine = found;
    images = buildTestImages((s) => console.log(`kubelet test images: ${s}`));
    node = await startKubeNode();
    const t0 = Date.now();
    node.importImages([...new Set([images.geth, images.starknetDevnet, images.node, images.haproxy, images.certbot, images.valkey])]);
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

  afterAll(async () => {
    try {
      if (project && node) pulumi(["destroy", "--yes", "--skip-preview", "--stack", STACK]);
    } finally {
      await node?.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }, 600_000);

  it("pulumi up with awaitReady: the engine waits for the pods, and every pod of the stack is Running and Ready with no restart", { timeout: 900_000 }, async () => {
    const t0 = Date.now();
    upOutput = ok(["up", "--yes", "--skip-preview", "--stack", STACK]);
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
    // Real geth (the image built from its Go module) runs in the geth StatefulSet.
    expect(ready.find((p) => p.metadata.name === "geth-0")!.spec.containers.map((c) => c.image)).toEqual([images.geth]);
  });

  it("the gateway serves TLS through the NodePort Service and relays JSON-RPC to geth and Starknet Devnet; the L1 head moves", { timeout: 120_000 }, async () => {
    // Ready pods serve RPC; the gateway relays to a node once its sync check passes (sync-health).
    for (const [chain, method] of [["ethdev", "eth_blockNumber"], ["strkdev", "starknet_blockNumber"]]) {
      await waitFor(`${chain} in the gateway's rotation`, async () => ((await call(nodePort, `/gateway/${chain}/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method, params: [] })).status === 200 ? true : undefined), 90_000).catch(async (e) => {
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
});
