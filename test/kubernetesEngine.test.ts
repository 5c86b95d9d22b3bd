/**
 * The stack on a real Kubernetes API server with the real Pulumi engine: etcd, kube-apiserver and
 * kube-controller-manager built from their Go modules (scripts/kubernetes/build.sh) on loopback,
 * and the Pulumi CLI with the Kubernetes provider plugin built from theirs (scripts/engine/build.sh).
 * `pulumi up` of the testnet stack moved onto the cluster: every object the plan renders is accepted
 * and stored as rendered, the StatefulSets' claims are made by the real controller, a preview after
 * it finds nothing to change, no secret is in the state in clear, an object the API server refuses
 * fails the update once with the API server's own message, and `pulumi destroy` leaves the claims,
 * which the next `up` mounts again.
 *
 * There is no kubelet and no scheduler here: pods never run, so the stack sets `host.awaitReady:
 * false` (the provider's wait for ready pods is skipped, which an operator's cluster does not need).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { loadConfig } from "../config/index.js";
import { renderCluster } from "../kubernetes/index.js";
import { planStack } from "../plan/index.js";
import { ROOT, TEST_PROJECT_KEYS, encodeConfigValue } from "./harness.js";
import { engineEnv, engineWithKubernetes, expectNoStackTrace, projectCopy, pulumiCli, type Engine } from "./support/engine.js";
import { startKubeCluster, type KubeCluster, type KubeObject } from "./support/kubeCluster.js";
import { waitFor } from "./support/net.js";

const STACK = "cluster";
const NS = "rpcstack-engine";
const PASSPHRASE = "rpcstack-engine-test";

/** The testnet stack file with its host replaced by the test's cluster. */
function stackFile(): string {
  const doc = parse(readFileSync(join(ROOT, "stacks/Pulumi.testnet.yaml"), "utf8"));
  doc.config["rpcstack:host"] = { kind: "kubernetes", namespace: NS, awaitReady: false, tlsSecret: "rpc-testnet-tls" };
  doc.config["rpcstack:gateway"] = { domain: "rpc-testnet.example.com" };
  return stringify(doc);
}

/** The API path of a namespaced object of the kinds the stack renders. */
const PATHS: Record<string, string> = {
  ConfigMap: "/api/v1/namespaces/NS/configmaps",
  Secret: "/api/v1/namespaces/NS/secrets",
  Service: "/api/v1/namespaces/NS/services",
  StatefulSet: "/apis/apps/v1/namespaces/NS/statefulsets",
  Deployment: "/apis/apps/v1/namespaces/NS/deployments",
  Job: "/apis/batch/v1/namespaces/NS/jobs",
  PodDisruptionBudget: "/apis/policy/v1/namespaces/NS/poddisruptionbudgets",
  Ingress: "/apis/networking.k8s.io/v1/namespaces/NS/ingresses",
  NetworkPolicy: "/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies",
};
const pathOf = (kind: string, name?: string) => `${PATHS[kind].replace("NS", NS)}${name ? `/${name}` : ""}`;
/** The stack's own objects of a kind (a namespace also holds what the cluster puts there, like kube-root-ca.crt). */
const ours = (kind: string) => `${pathOf(kind)}?labelSelector=${encodeURIComponent("app.kubernetes.io/part-of=rpcstack")}`;
// Chain data, and each gateway replica's usage ledger.
const CLAIMS = ["geth-geth-0", "juno-juno-0", "lighthouse-geth-0", "usage-gateway-0", "usage-gateway-1"];

describe("the testnet stack on a real Kubernetes API server, through the real Pulumi engine", () => {
  let cluster: KubeCluster;
  let engine: Engine;
  let project: string;
  let env: NodeJS.ProcessEnv;
  const dirs: string[] = [];
  const temp = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  const { run: pulumi, ok } = pulumiCli(() => engine, () => project, () => env, { timeoutMs: 600_000 });
  const claims = async () => (await cluster.list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`)).map((c) => c.metadata.name).sort();

  beforeAll(async () => {
    engine = engineWithKubernetes();
    cluster = await startKubeCluster();
    project = projectCopy(temp("rpcstack-k8s-project-"), { [STACK]: stackFile() });
    const state = temp("rpcstack-k8s-state-");
    env = engineEnv(engine, temp("rpcstack-k8s-home-"), { PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: PASSPHRASE });
    ok(["stack", "init", STACK]);
    ok(["config", "set", "--secret", "--stack", STACK, "rpcstack:kubeconfig"], cluster.kubeconfig);
    ok(["config", "set", "--secret", "--stack", STACK, "rpcstack:projectKeys"], JSON.stringify(TEST_PROJECT_KEYS));
    await cluster.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  }, 900_000);

  afterAll(async () => {
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it("pulumi up: every object the plan renders is accepted and stored as rendered; the controller makes each node's claims", async () => {
    ok(["up", "--yes", "--skip-preview", "--stack", STACK]);
    const settings = loadConfig({ entries: { ...Object.fromEntries(Object.entries(parse(stackFile()).config).map(([k, v]) => [k, typeof v === "string" ? v : encodeConfigValue(v)])), "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS), "rpcstack:kubeconfig": cluster.kubeconfig } });
    if (settings.host.kind !== "kubernetes") throw new Error("not a cluster stack");
    const rendered = renderCluster<string>({ plan: planStack(settings), settings, host: settings.host, generated: { gateway: [], keys: [] }, content: () => "", secretValue: () => "" }).map((r) => r.object);
    expect(rendered.length).toBeGreaterThan(10);
    for (const o of rendered) {
      const stored = await cluster.get<KubeObject>(pathOf(o.kind, o.metadata.name));
      expect(stored.metadata.labels?.["app.kubernetes.io/part-of"], `${o.kind}/${o.metadata.name}`).toBe("rpcstack");
    }
    const geth = await cluster.get<KubeObject>(pathOf("StatefulSet", "geth"));
    const want = rendered.find((o) => o.kind === "StatefulSet" && o.metadata.name === "geth") as any;
    expect(geth.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: "Retain", whenScaled: "Retain" });
    expect(geth.spec.volumeClaimTemplates.map((t: any) => t.spec.resources.requests.storage)).toEqual(want.spec.volumeClaimTemplates.map((t: any) => t.spec.resources.requests.storage));
    const stored = (await cluster.list(ours("Deployment"))).map((d) => d.metadata.name).sort();
    expect(stored).toEqual(rendered.filter((o) => o.kind === "Deployment").map((o) => o.metadata.name).sort());
    if (cluster.controllers) await waitFor("the StatefulSets' claims", async () => ((await claims()).join() === CLAIMS.join() ? true : undefined), 60_000);
  });

  it("a preview afterwards finds nothing to change", () => {
    ok(["preview", "--expect-no-changes", "--stack", STACK]);
  });

  it("the state holds neither the kubeconfig's credentials nor a project key in clear", () => {
    const state = ok(["stack", "export", "--stack", STACK]);
    const token = /token: (\S+)/.exec(cluster.kubeconfig)?.[1];
    expect(token).toBeTruthy();
    expect(state).not.toContain(token!);
    for (const k of TEST_PROJECT_KEYS) expect(state).not.toContain(k.key);
  });

  it("an object the API server refuses fails the update with the API server's own message; the stack recovers once the setting is fixed", async () => {
    // Another Service of the cluster already holds the node port the operator asks for.
    await cluster.create("/api/v1/namespaces/default/services", {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "holds-30443" },
      spec: { type: "NodePort", selector: { app: "none" }, ports: [{ port: 443, nodePort: 30443 }] },
    } as KubeObject);
    ok(["config", "set", "--path", "--stack", STACK, "rpcstack:host.expose.kind", "NodePort"]);
    ok(["config", "set", "--path", "--stack", STACK, "rpcstack:host.expose.nodePort", "30443"]);
    const r = pulumi(["up", "--yes", "--skip-preview", "--stack", STACK]);
    expect(r.status).not.toBe(0);
    // Tried once, not retried over and over; the diagnostics say it once, in the API server's words.
    expect(r.out).not.toMatch(/Retry #1/);
    const diagnostics = r.out.slice(r.out.indexOf("Diagnostics:"));
    const said = diagnostics.split("\n").filter((l) => l.includes('Service "rpcstack-gateway" is invalid: spec.ports[0].nodePort: Invalid value: 30443: provided port is already allocated'));
    expect(said).toHaveLength(1);
    expectNoStackTrace(r.out);
    ok(["config", "rm", "--path", "--stack", STACK, "rpcstack:host.expose"]);
    ok(["up", "--yes", "--skip-preview", "--stack", STACK]);
    expect((await cluster.get<KubeObject>(pathOf("Service", "rpcstack-gateway"))).spec.type).toBe("LoadBalancer");
  });

  it("pulumi destroy removes the stack's objects and leaves the chain-data claims, which the next up mounts again", async () => {
    const before = cluster.controllers ? await cluster.list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`) : [];
    if (cluster.controllers) expect(before.map((c) => c.metadata.name).sort()).toEqual(CLAIMS);
    ok(["destroy", "--yes", "--skip-preview", "--stack", STACK]);
    for (const kind of ["StatefulSet", "Deployment", "Service", "ConfigMap"]) {
      await waitFor(`no ${kind} left`, async () => ((await cluster.list(ours(kind))).length === 0 ? true : undefined), 60_000);
    }
    if (!cluster.controllers) return;
    // The garbage collector has had its chance to act on the claims' owners.
    await new Promise((r) => setTimeout(r, 5_000));
    const after = await cluster.list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`);
    expect(after.map((c) => c.metadata.uid).sort()).toEqual(before.map((c) => c.metadata.uid).sort());
    ok(["up", "--yes", "--skip-preview", "--stack", STACK]);
    const again = await cluster.list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`);
    expect(again.map((c) => c.metadata.uid).sort()).toEqual(before.map((c) => c.metadata.uid).sort());
    ok(["destroy", "--yes", "--skip-preview", "--stack", STACK]);
  });
});
