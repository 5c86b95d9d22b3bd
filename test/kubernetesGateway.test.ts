/**
 * The gateway pod a cluster is given: the files its HAProxy container mounts (from the rendered
 * ConfigMap and Secret, by subPath) are exactly what HAProxy needs; real HAProxy checks them.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keyMap } from "../gateway/build.js";
import { renderCluster, type K8sObject } from "../kubernetes/index.js";
import { gatewayFiles, keyFiles, planStack } from "../plan/index.js";
import { ROOT, TEST_PROJECT_KEYS } from "./harness.js";
import { checkContainerFiles } from "./support/haproxy.js";
import { kubeStack } from "./support/kubeStack.js";

/** Container path -> content for one container of a rendered workload. */
function mountedFiles(objects: readonly K8sObject[], workload: string, containerName: string): Record<string, string> {
  const w = objects.find((o) => (o.kind === "Deployment" || o.kind === "StatefulSet") && o.metadata.name === workload) as any;
  const pod = w.spec.template.spec;
  const c = pod.containers.find((x: any) => x.name === containerName);
  const source = (volume: string) => {
    const v = pod.volumes.find((x: any) => x.name === volume);
    const name = v.configMap?.name ?? v.secret?.secretName;
    const o = objects.find((x) => (x.kind === "ConfigMap" || x.kind === "Secret") && x.metadata.name === name) as any;
    return o.data ?? o.stringData;
  };
  return Object.fromEntries(c.volumeMounts.filter((m: any) => m.subPath).map((m: any) => [m.mountPath, source(m.name)[m.subPath]]));
}

describe.each(["local", "testnet"] as const)("the %s stack's gateway pod on a cluster", (stack) => {
  it("holds every file HAProxy loads: haproxy -c on exactly the mounted files says the configuration is valid", () => {
    const s = kubeStack(stack);
    if (s.host.kind !== "kubernetes") throw new Error("not a cluster");
    const plan = planStack(s);
    const objects = renderCluster<string>({
      plan,
      settings: s,
      host: s.host,
      generated: { gateway: gatewayFiles<string>(plan.gatewayConfig.compiled), keys: keyFiles<string>(keyMap(TEST_PROJECT_KEYS), s.gateway.quotas) },
      content: (f) => (f.from === "package" ? readFileSync(join(ROOT, f.source), "utf8") : `bundle ${f.source}`),
      secretValue: (n) => `secret ${n}`,
    }).map((r) => r.object);
    const files = mountedFiles(objects, "gateway", "haproxy");
    expect(Object.keys(files)).toContain("/var/lib/rpcstack-keys/keys.map");
    expect(files["/var/lib/rpcstack-keys/keys.map"]).toBe(keyMap(TEST_PROJECT_KEYS));
    expect(checkContainerFiles(files)).toContain("Configuration file is valid");
  });
});

describe("every name the gateway's configuration reaches on a cluster is a Service the stack renders", () => {
  it.each([
    ["testnet", {}],
    ["testnet, several nodes per layer", { extra: { nodes: { l1: ["main", "main"], l2: ["main", "main"] } } }],
    ["testnet with Pathfinder", { extra: { l2: { client: "pathfinder" } } }],
    ["local", {}],
  ] as const)("%s", (label, o) => {
    const s = kubeStack(label.startsWith("local") ? "local" : "testnet", o as Parameters<typeof kubeStack>[1]);
    if (s.host.kind !== "kubernetes") throw new Error("not a cluster");
    const plan = planStack(s);
    const services = new Set(
      renderCluster<string>({ plan, settings: s, host: s.host, generated: { gateway: [], keys: [] }, content: () => "", secretValue: () => "" })
        .filter((r) => r.object.kind === "Service")
        .map((r) => r.object.metadata.name),
    );
    // A server HAProxy cannot resolve at start is disabled for good: every call of its chain would get 503.
    const hosts = [...plan.gatewayConfig.compiled.config.matchAll(/^\s*server \S+ ([a-z][a-z0-9-]*):\d+/gm)].map((m) => m[1]);
    expect(hosts.length).toBeGreaterThan(3);
    expect(hosts.filter((h) => !services.has(h))).toEqual([]);
  });
});
