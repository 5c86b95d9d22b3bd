/**
 * A stack's secrets (components/stackSecrets.ts) on both kinds of host, on Pulumi's mock engine:
 * every secret config value, and what is made from it, reaches resources only as a Pulumi secret,
 * and the same things are secret on Docker and on Kubernetes.
 */
import { describe, expect, it } from "vitest";
import { TEST_PROJECT_KEYS, runProgram, type ProgramRun } from "./harness.js";
import { TEST_KUBECONFIG } from "./support/kubeStack.js";

const SECRET = "Z9y8X7w6V5u4T3s2";
const external = { rpcHttp: `https://l1.example.net/v3/${SECRET}`, rpcWs: `wss://l1.example.net/ws/v3/${SECRET}` };
const config = {
  tier: "minimum",
  badges: { projects: [{ projectId: "webapp", chains: ["STRK"], origins: ["https://app.example.com"] }] },
};
const aws = {
  gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com" },
  host: { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32"], diskGB: 1000 },
};
const cluster = { gateway: { domain: "rpc.example.com" }, host: { kind: "kubernetes", namespace: "rpc", tlsSecret: "rpc-tls" } };

async function run(stack: object, secrets: Record<string, unknown>): Promise<ProgramRun> {
  const r = await runProgram({ stack: "mainnet", config: { ...config, ...stack }, secrets: { projectKeys: TEST_PROJECT_KEYS, l1: { external }, ...secrets } });
  if (r.error) throw r.error;
  return r;
}

/** Where a value containing one of `needles` is an input in the clear: resource name and input path. */
function inClear(r: ProgramRun, needles: readonly string[]): string[] {
  const out: string[] = [];
  for (const x of r.resources) {
    const walk = (v: unknown, path: string) => {
      if (x.secretInputs.some((p) => path === p || path.startsWith(`${p}.`))) return;
      if (typeof v === "string" && needles.some((n) => v.includes(n))) out.push(`${x.name} ${path}`);
      else if (v && typeof v === "object") for (const [k, c] of Object.entries(v)) walk(c, path ? `${path}.${k}` : k);
    };
    walk(x.inputs, "");
  }
  return out;
}

/** Dotted paths of secret inputs, by resource name, of resources that have any. */
const secretPaths = (r: ProgramRun) => Object.fromEntries(r.resources.filter((x) => x.secretInputs.length).map((x) => [x.name, [...x.secretInputs].sort()]));

describe("a stack's secrets", () => {
  it("on Docker and on Kubernetes: no secret config value reaches an input or output in the clear", async () => {
    const needles = [SECRET, ...TEST_PROJECT_KEYS.map((k) => k.key), "not-a-real-key"];
    for (const r of [await run(aws, {}), await run(cluster, { kubeconfig: TEST_KUBECONFIG })]) {
      expect(inClear(r, needles)).toEqual([]);
      expect(JSON.stringify(r.outputs)).not.toContain(SECRET);
    }
  });

  it("the same values are secret on both: the external L1's URLs, the badge signing key, the key map, haproxy.cfg relaying that L1", async () => {
    // The nodes and readiness take the L1's URLs, the badge service its key; the gateway's haproxy.cfg names the L1, the key sync's key map is the keys'.
    expect(secretPaths(await run(aws, {}))).toEqual({
      "rpcstack-l2-juno": ["envs"],
      "rpcstack-readiness-sync-health": ["envs"],
      "rpcstack-readiness-sync-check": ["envs"],
      "rpcstack-gateway-badges": ["envs"],
      "rpcstack-gateway-haproxy": ["uploads.0.content"],
      "rpcstack-gateway-key-sync": ["uploads.1.content"],
    });
    // The same values in two Secrets (the services' named secrets; the key map and haproxy.cfg), and the kubeconfig.
    const kube = await run(cluster, { kubeconfig: TEST_KUBECONFIG });
    expect(secretPaths(kube)).toEqual({
      "rpcstack-provider": ["kubeconfig"],
      "rpcstack-secret-gateway-secret-files": ["stringData"],
      "rpcstack-secret-rpcstack-secrets": ["stringData"],
    });
    expect(Object.keys(kube.one("kubernetes:core/v1:Secret", "rpcstack-secret-rpcstack-secrets").inputs.stringData).sort()).toEqual(["RPCSTACK_BADGE_SIGNING_KEY", "RPCSTACK_L1_HTTP_URL", "RPCSTACK_L1_WS_URL"]);
  });
});
