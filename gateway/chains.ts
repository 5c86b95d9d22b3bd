/** Which chains the gateway serves: the stack's own nodes plus `gateway.chains`. Pure. */
import type { L1Endpoint, StackSettings } from "../config/index.js";
import { dataVolumes, diskCheckUrl, l1Urls, l2Urls, syncHealthUrls } from "../services/index.js";
import type { GatewayChain } from "./build.js";

/**
 * Stands in for an external L1's secret URLs where only the chain's shape matters (endpoint
 * lists, the manifest, the smoke plan); the Gateway component builds HAProxy's file with the real ones.
 */
export const EXTERNAL_L1_SHAPE: L1Endpoint = { rpcHttp: "https://external-l1.invalid", rpcWs: "wss://external-l1.invalid" };

export function gatewayChains(settings: StackSettings, l1Endpoint: L1Endpoint = EXTERNAL_L1_SHAPE): GatewayChain[] {
  const { l1, l2 } = settings.network.chains;
  const health = syncHealthUrls(settings);
  // An external L1 is relayed to (and checked through readiness's /ready/l1), unless turned off.
  const l1Upstreams = settings.l1.external ? l1Endpoint : { rpcHttp: l1Urls().rpcHttp, rpcWs: l1Urls().rpcWs };
  const relayL1 = !settings.l1.external || settings.gateway.relayExternalL1;
  // Where the node keeps data, the disk watcher answers its health check: 503 while that volume
  // is nearly full, else the node's own check's status (services/disk.ts).
  const volumes = dataVolumes(settings);
  const builtIn: GatewayChain[] = [
    ...(relayL1 ? [{ ...l1, upstreams: l1Upstreams, healthUrl: volumes.l1.length ? diskCheckUrl("l1") : health.l1 }] : []),
    { ...l2, upstreams: { rpcHttp: l2Urls(settings).rpcHttp, rpcWs: l2Urls(settings).rpcWs }, healthUrl: volumes.l2.length ? diskCheckUrl("l2") : health.l2 },
  ];
  // The method policy's per-chain additions (gateway.methodPolicy.<path>).
  const policy = settings.gateway.methodPolicy ?? {};
  return [...builtIn, ...settings.gateway.chains.map((c) => ({ ...c }))].map((c) => ({ ...c, ...policy[c.path] }));
}
