/** rpcstack:host.kind kubernetes: what a cluster cannot honour is refused with one line naming the key. */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config/index.js";
import { TEST_PROJECT_KEYS, encodeConfigValue, stackFileConfig } from "./harness.js";
import { TEST_KUBECONFIG, kubeStack } from "./support/kubeStack.js";

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e.message.split("\n").slice(1).map((l) => l.trim());
    throw e;
  }
  return [];
}

describe("host kind kubernetes", () => {
  it("resolves with its defaults: namespace rpcstack, a LoadBalancer, two gateway replicas, awaiting readiness", () => {
    const s = kubeStack("local");
    expect(s.host).toEqual({ kind: "kubernetes", namespace: "rpcstack", createNamespace: false, expose: { kind: "LoadBalancer" }, gatewayReplicas: 2, counterStoreImage: "valkey/valkey:9.0.8", awaitReady: true });
    expect(s.kubeconfig).toBe(TEST_KUBECONFIG);
    // The cluster's own Prometheus scrapes the pods.
    expect(s.monitoring).toBeUndefined();
  });

  it.each([
    ["further hosts", { extra: { hosts: { b: { kind: "ssh", address: "10.0.0.2", user: "ops", privateAddress: "10.0.0.2" } } } }, "rpcstack:hosts: does not apply"],
    ["a counter store image on a moving tag", { host: { counterStoreImage: "valkey/valkey:latest" } }, "rpcstack:host.counterStoreImage: \"valkey/valkey:latest\" uses the moving tag"],
    ["its own Prometheus", { extra: { monitoring: { enabled: true } } }, "rpcstack:monitoring.enabled: does not apply on kubernetes"],
    ["an ACME account", { gateway: { acmeEmail: "ops@example.com" } }, "rpcstack:gateway.acmeEmail: does not apply on kubernetes"],
    ["a node port without NodePort", { host: { expose: { nodePort: 30443 } } }, "rpcstack:host.expose.nodePort: applies only with rpcstack:host.expose.kind NodePort"],
    ["a node port outside the cluster's range", { host: { expose: { kind: "NodePort", nodePort: 443 } } }, "rpcstack:host.expose.nodePort"],
    ["a namespace of its own while data is kept", { host: { createNamespace: true } }, "rpcstack:host.createNamespace: would let pulumi destroy delete the chain data"],
    ["one gateway replica", { host: { gatewayReplicas: 1 } }, "rpcstack:host.gatewayReplicas"],
    ["a namespace that is no Kubernetes name", { host: { namespace: "RPC_stack" } }, "rpcstack:host.namespace: must be a Kubernetes name"],
    ["a namespace with a dot (a label, not a subdomain)", { host: { namespace: "rpc.stack" } }, "rpcstack:host.namespace: must be a Kubernetes name"],
    ["a TLS Secret name with an underscore", { host: { tlsSecret: "rpc_tls" } }, "rpcstack:host.tlsSecret: must be a Kubernetes name"],
    ["a disk size (each claim is sized from the table)", { host: { diskGB: 500 } }, "rpcstack:host.diskGB"],
    ["a Prometheus namespace that is no Kubernetes name", { host: { metricsFrom: { namespace: "Monitoring" } } }, "rpcstack:host.metricsFrom.namespace: must be a Kubernetes name"],
    ["a Prometheus named by labels alone", { host: { metricsFrom: { podLabels: { app: "prometheus" } } } }, "rpcstack:host.metricsFrom"],
    ["a Prometheus label value with a space", { host: { metricsFrom: { namespace: "monitoring", podLabels: { app: "prom etheus" } } } }, "must be a label value"],
    ["a Prometheus label key with a space", { host: { metricsFrom: { namespace: "monitoring", podLabels: { "my app": "prometheus" } } } }, "rpcstack:host.metricsFrom.podLabels"],
  ])("refuses %s", (_, o, expected) => {
    const got = problems(() => kubeStack("testnet", o as Parameters<typeof kubeStack>[1]));
    // One line for the key (a further host also draws its own rules: an ssh key, its nodes).
    expect(got.filter((l) => l.includes(expected)), got.join("\n")).toHaveLength(1);
  });

  it("storage classes and Secrets are subdomains: dots are fine", () => {
    const s = kubeStack("testnet", { host: { tlsSecret: "rpc.example.com-tls", storageClass: "ebs.csi.aws.com-gp3" } });
    expect(s.host).toMatchObject({ tlsSecret: "rpc.example.com-tls", storageClass: "ebs.csi.aws.com-gp3" });
  });

  it("a domain needs the TLS Secret with its certificate; a TLS Secret needs the domain", () => {
    expect(problems(() => kubeStack("testnet", { host: { tlsSecret: undefined } }))).toEqual([expect.stringContaining("rpcstack:host.tlsSecret: is required with rpcstack:gateway.domain on kubernetes")]);
    expect(problems(() => kubeStack("local", { host: { tlsSecret: "x" } }))).toEqual([expect.stringContaining("rpcstack:host.tlsSecret: needs rpcstack:gateway.domain")]);
  });

  it("a public network needs a domain; an Ingress needs one too", () => {
    expect(problems(() => kubeStack("testnet", { gateway: { domain: undefined }, host: { tlsSecret: undefined } }))).toEqual([expect.stringContaining("rpcstack:gateway.domain: is required when rpcstack:host.kind is kubernetes")]);
    expect(problems(() => kubeStack("local", { host: { expose: { kind: "Ingress" } } }))).toEqual([expect.stringContaining("rpcstack:host.expose.kind: Ingress routes by hostname")]);
  });

  it("the cluster is named by a kubeconfig (a secret) or a context of the operator's own, not both, not neither", () => {
    const entries = (extra: Record<string, string>) => ({ ...stackFileConfig("local"), "rpcstack:host": encodeConfigValue({ kind: "kubernetes" }), "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS), ...extra });
    expect(problems(() => loadConfig({ entries: entries({}) }))).toEqual([expect.stringContaining("rpcstack:kubeconfig: is required when rpcstack:host.kind is kubernetes")]);
    expect(problems(() => loadConfig({ entries: { ...entries({}), "rpcstack:host": encodeConfigValue({ kind: "kubernetes", context: "prod" }) } }))).toEqual([]);
    expect(problems(() => kubeStack("local", { host: { context: "prod" } }))).toEqual([expect.stringContaining("rpcstack:host.context: goes with your own kubeconfig")]);
    const clear = problems(() => loadConfig({ entries: entries({ "rpcstack:kubeconfig": TEST_KUBECONFIG }), isSecret: (k) => k !== "kubeconfig" }));
    expect(clear).toEqual([expect.stringContaining("rpcstack:kubeconfig: must be set as a secret")]);
    const junk = problems(() => loadConfig({ entries: entries({ "rpcstack:kubeconfig": "hunter2" }) }));
    expect(junk).toEqual([expect.stringContaining("rpcstack:kubeconfig: must be a kubeconfig")]);
    expect(junk[0]).not.toContain("hunter2");
  });

  it("a kubeconfig on another host kind is refused", () => {
    const entries = { ...stackFileConfig("local"), "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS), "rpcstack:kubeconfig": TEST_KUBECONFIG };
    expect(problems(() => loadConfig({ entries }))).toEqual([expect.stringContaining("rpcstack:kubeconfig: is only used when rpcstack:host.kind is kubernetes (it is local)")]);
  });
});
