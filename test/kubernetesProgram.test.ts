/**
 * The program on a cluster (host kind kubernetes), on Pulumi's mock engine: which Kubernetes
 * resources it registers, through which provider, in which order, and what stays secret.
 */
import { describe, expect, it } from "vitest";
import { TEST_PROJECT_KEYS, runProgram, type ProgramRun } from "./harness.js";
import { TEST_KUBECONFIG } from "./support/kubeStack.js";

const CLUSTER = { host: { kind: "kubernetes", namespace: "rpc" } };
const run = (config: Record<string, unknown> = {}, secrets: Record<string, unknown> = {}) =>
  runProgram({ stack: "local", config: { ...CLUSTER, ...config }, secrets: { projectKeys: TEST_PROJECT_KEYS, kubeconfig: TEST_KUBECONFIG, ...secrets } });

const k8sTypes = (r: ProgramRun) => r.resources.filter((x) => x.type.startsWith("kubernetes:")).map((x) => x.type);

describe("the local (devnet) stack on a cluster", () => {
  it("registers only Kubernetes objects through one provider made from the kubeconfig, which stays a secret; no Docker, no host preflight", async () => {
    const r = await run();
    expect(r.error).toBeUndefined();
    expect(r.resources.some((x) => x.type.startsWith("docker:") || x.type.startsWith("command:"))).toBe(false);
    expect(r.invokes.filter((i) => i.token.startsWith("command:"))).toEqual([]);
    const provider = r.one("pulumi:providers:kubernetes");
    expect(provider.secretInputs).toContain("kubeconfig");
    expect(provider.inputs.namespace).toBe("rpc");
    // Files are updated in place (fixed names); the pod template's digest rolls the pods.
    expect(String(provider.inputs.enableConfigMapMutable)).toBe("true");
    expect(String(provider.inputs.enableSecretMutable)).toBe("true");
    for (const x of r.resources.filter((y) => y.type.startsWith("kubernetes:"))) {
      expect(x.provider, x.name).toContain(provider.urn);
      expect(r.byUrn(x.parent!)?.type, x.name).toBe("rpcstack:index:KubernetesStack");
    }
    expect(new Set(k8sTypes(r))).toEqual(
      new Set(["kubernetes:core/v1:ConfigMap", "kubernetes:core/v1:Secret", "kubernetes:core/v1:Service", "kubernetes:apps/v1:StatefulSet", "kubernetes:apps/v1:Deployment", "kubernetes:policy/v1:PodDisruptionBudget", "kubernetes:networking.k8s.io/v1:NetworkPolicy", "kubernetes:batch/v1:Job"]),
    );
    // The sync check: waited for as the nodes are (readiness.timeoutMinutes and 2 for its report),
    // and replaced under its fixed name when the nodes change.
    const check = r.resources.find((x) => x.type === "kubernetes:batch/v1:Job")!;
    expect(check.name).toMatch(/-job-sync-check$/);
    expect(check.deleteBeforeReplace).toBe(true);
    expect(r.outputs).toMatchObject({ network: "devnet", namespace: "rpc", gatewayService: "rpcstack-gateway" });
    expect(Object.keys(r.outputs.endpoints as object).sort()).toEqual(["ethdev", "strkdev"]);
  });

  it("the key map Secret's content is a Pulumi secret, and no project key reaches any input in clear", async () => {
    const r = await run();
    const keys = r.resources.find((x) => x.type === "kubernetes:core/v1:Secret" && x.name.endsWith("gateway-secret-files"))!;
    expect(keys.secretInputs.some((p) => p.startsWith("stringData"))).toBe(true);
    expect(keys.additionalSecretOutputs).toEqual(expect.arrayContaining(["stringData", "data"]));
    const all = JSON.stringify(r.resources.map((x) => x.inputs));
    for (const k of TEST_PROJECT_KEYS) expect(all).not.toContain(k.key);
    expect(JSON.stringify(r.outputs)).not.toContain("clusters:");
  });

  it("the gateway's pods carry a digest of their files: a new key rolls them", async () => {
    const digest = async (keys: typeof TEST_PROJECT_KEYS) => {
      const r = await run({}, { projectKeys: keys });
      return r.resources.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && x.name.endsWith("gateway"))!.inputs.spec.template.metadata.annotations["rpcstack.io/files-digest"];
    };
    const r = await run();
    const gw = r.resources.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && x.name.endsWith("gateway"))!;
    // The digest tells nothing of the keys: in clear, so a preview shows the roll.
    expect(gw.secretInputs.filter((p) => p.startsWith("spec"))).toEqual([]);
    const before = await digest(TEST_PROJECT_KEYS);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    expect(await digest([...TEST_PROJECT_KEYS, { name: "third", key: "Zq3vW8nR2tY6uI0pA4sD7fG1hJ5kL9xC" }])).not.toBe(before);
  });

  it("the namespace is the operator's: the stack neither makes nor deletes it, so pulumi destroy leaves the claims in it", async () => {
    expect((await run()).byType("kubernetes:core/v1:Namespace")).toEqual([]);
  });

  it("a stack that keeps no data may own its namespace: everything is created after it", async () => {
    const r = await run({ host: { kind: "kubernetes", namespace: "rpc", createNamespace: true }, retainData: false });
    expect(r.error).toBeUndefined();
    const ns = r.one("kubernetes:core/v1:Namespace");
    expect(ns.inputs.metadata.name).toBe("rpc");
    for (const x of r.resources.filter((y) => y.type.startsWith("kubernetes:") && y !== ns && !y.type.startsWith("pulumi:"))) expect(x.dependencies, x.name).toContain(ns.urn);
  });
});

describe("the testnet stack on a cluster", () => {
  const testnet = (config: Record<string, unknown> = {}) =>
    runProgram({
      stack: "testnet",
      config: { host: { kind: "kubernetes", tlsSecret: "tls", awaitReady: true }, gateway: { domain: "rpc-testnet.example.com" }, nodes: { l1: ["main", "main"], l2: ["main"] }, ...config },
      secrets: { projectKeys: TEST_PROJECT_KEYS, kubeconfig: TEST_KUBECONFIG },
    });

  it("a layer's second node is applied after the first (the rollout order)", async () => {
    const r = await testnet();
    expect(r.error).toBeUndefined();
    const sets = r.byType("kubernetes:apps/v1:StatefulSet");
    const geth = sets.find((x) => x.name.endsWith("-geth"))!;
    const geth2 = sets.find((x) => x.name.endsWith("-geth-2"))!;
    expect(geth2.dependencies).toContain(geth.urn);
    expect(geth.dependencies).not.toContain(geth2.urn);
  });
});
