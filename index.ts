/** The rpcstack Pulumi program: validate the stack's config, then build one RpcProvider. */
import * as pulumi from "@pulumi/pulumi";
import { RpcProvider } from "./components/rpcProvider.js";
import { readStackConfig } from "./components/stackConfig.js";

// Throws ConfigError, listing every problem, before any resource is registered.
const { projectKeys, sshPrivateKey, l1Endpoint, ...settings } = readStackConfig();
const provider = new RpcProvider("rpcstack", {
  settings,
  projectKeys: pulumi.secret(projectKeys),
  sshPrivateKey: sshPrivateKey === undefined ? undefined : pulumi.secret(sshPrivateKey),
  l1Endpoint: l1Endpoint === undefined ? undefined : pulumi.secret(l1Endpoint),
});

export const network = provider.network;
export const tier = provider.tier;
export const publicAddress = provider.host.publicAddress;
export const l1RpcUrl = provider.l1.rpcHttpUrl;
export const l2RpcUrl = provider.l2.rpcHttpUrl;
export const l1SyncState = provider.readiness.l1State;
export const l2SyncState = provider.readiness.l2State;
export const endpoints = provider.gateway.endpoints;
export const smokeBlockNumbers = provider.smokeTest.blockNumbers;
export const providerManifest = provider.providerManifest;
// Where pages ask for badges, on stacks that issue them (an output left undefined makes Pulumi warn).
if (settings.badges) module.exports.badgeServerUrl = provider.badgeServerUrl;
// Only aws hosts have a cost estimate: an export left undefined makes Pulumi warn on every run.
if (provider.host.monthlyCostUsd) module.exports.monthlyCostUsd = provider.host.monthlyCostUsd;
