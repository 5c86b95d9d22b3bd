/**
 * The rpcstack Pulumi program: validate the stack's config, check the hosts, then build one
 * RpcProvider. An async function (Pulumi awaits it and takes its result as the stack's outputs), so
 * the hosts' preflights finish before anything is registered.
 */
import * as pulumi from "@pulumi/pulumi";
import { ConfigError } from "./config/index.js";
import { HostUnfit } from "./hosts/preflight.js";
import { preflightHosts } from "./components/preflight.js";
import { KubernetesStack } from "./components/kubernetesStack.js";
import { RpcProvider } from "./components/rpcProvider.js";
import { readStackConfig } from "./components/stackConfig.js";
import { splitSecrets } from "./components/stackSecrets.js";

export default async function program(): Promise<Record<string, unknown>> {
  let provider: RpcProvider;
  try {
    // Throws ConfigError, listing every problem, before any resource is registered.
    const { settings: config, secrets } = splitSecrets(readStackConfig());
    const { projectKeys, l1Endpoint } = secrets;
    if (config.host.kind === "kubernetes") {
      // The cluster is the host: no preflight of a machine, no Docker.
      const stack = new KubernetesStack("rpcstack", { settings: config, projectKeys, kubeconfig: secrets.kubeconfig, l1Endpoint });
      return { ...shared(stack), namespace: stack.namespace, gatewayService: stack.gatewayService };
    }
    const settings = await preflightHosts(config);
    provider = new RpcProvider("rpcstack", { settings, projectKeys, sshPrivateKey: secrets.sshPrivateKey, l1Endpoint });
  } catch (e) {
    // The operator's own mistakes reach them as the message alone: a RunError is printed without
    // the engine's "unhandled exception" wrapper and stack trace.
    if (e instanceof ConfigError || e instanceof HostUnfit) throw new pulumi.RunError(e.message);
    throw e;
  }
  return {
    ...shared(provider),
    publicAddress: provider.host.publicAddress,
    l1RpcUrl: provider.l1.rpcHttpUrl,
    l2RpcUrl: provider.l2.rpcHttpUrl,
    l1SyncState: provider.readiness.l1State,
    l2SyncState: provider.readiness.l2State,
    smokeBlockNumbers: provider.smokeTest.blockNumbers,
    // Only aws hosts have a cost estimate, and only stacks with badges a badge server: an output
    // left undefined makes Pulumi warn on every run.
    ...(provider.host.monthlyCostUsd ? { monthlyCostUsd: provider.host.monthlyCostUsd } : {}),
    ...(provider.badgeServerUrl ? { badgeServerUrl: provider.badgeServerUrl } : {}),
  };
}

/** The outputs a stack has on every kind of host. */
const shared = (c: KubernetesStack | RpcProvider) => ({
  network: c.network,
  tier: c.tier,
  endpoints: c instanceof RpcProvider ? c.gateway.endpoints : c.endpoints,
  providerManifest: c.providerManifest,
});
