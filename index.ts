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

export default async function program(): Promise<Record<string, unknown>> {
  let provider: RpcProvider;
  try {
    // Throws ConfigError, listing every problem, before any resource is registered.
    const { projectKeys, sshPrivateKey, kubeconfig, l1Endpoint, ...config } = readStackConfig();
    if (config.host.kind === "kubernetes") {
      // The cluster is the host: no preflight of a machine, no Docker.
      const stack = new KubernetesStack("rpcstack", {
        settings: config,
        projectKeys: pulumi.secret(projectKeys),
        kubeconfig: kubeconfig === undefined ? undefined : pulumi.secret(kubeconfig),
        l1Endpoint: l1Endpoint === undefined ? undefined : pulumi.secret(l1Endpoint),
      });
      return { network: stack.network, tier: stack.tier, namespace: stack.namespace, gatewayService: stack.gatewayService, endpoints: stack.endpoints, providerManifest: stack.providerManifest };
    }
    const settings = await preflightHosts(config);
    provider = new RpcProvider("rpcstack", {
      settings,
      projectKeys: pulumi.secret(projectKeys),
      sshPrivateKey: sshPrivateKey === undefined ? undefined : pulumi.secret(sshPrivateKey),
      l1Endpoint: l1Endpoint === undefined ? undefined : pulumi.secret(l1Endpoint),
    });
  } catch (e) {
    // The operator's own mistakes reach them as the message alone: a RunError is printed without
    // the engine's "unhandled exception" wrapper and stack trace.
    if (e instanceof ConfigError || e instanceof HostUnfit) throw new pulumi.RunError(e.message);
    throw e;
  }
  return {
    network: provider.network,
    tier: provider.tier,
    publicAddress: provider.host.publicAddress,
    l1RpcUrl: provider.l1.rpcHttpUrl,
    l2RpcUrl: provider.l2.rpcHttpUrl,
    l1SyncState: provider.readiness.l1State,
    l2SyncState: provider.readiness.l2State,
    endpoints: provider.gateway.endpoints,
    smokeBlockNumbers: provider.smokeTest.blockNumbers,
    providerManifest: provider.providerManifest,
    // Only aws hosts have a cost estimate, and only stacks with badges a badge server: an output
    // left undefined makes Pulumi warn on every run.
    ...(provider.host.monthlyCostUsd ? { monthlyCostUsd: provider.host.monthlyCostUsd } : {}),
    ...(provider.badgeServerUrl ? { badgeServerUrl: provider.badgeServerUrl } : {}),
  };
}
