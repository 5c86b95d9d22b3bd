/** Which chains the gateway serves: the stack's own nodes plus `gateway.chains`. Pure. */
import type { StackSettings } from "../config/index.js";
import { l1Urls, l2Urls, syncHealthUrls } from "../services/index.js";
import type { GatewayChain } from "./build.js";

export function gatewayChains(settings: StackSettings): GatewayChain[] {
  const { l1, l2 } = settings.network.chains;
  const health = syncHealthUrls(settings);
  const builtIn: GatewayChain[] = [
    { ...l1, upstreams: { rpcHttp: l1Urls().rpcHttp, rpcWs: l1Urls().rpcWs }, healthUrl: health.l1 },
    { ...l2, upstreams: { rpcHttp: l2Urls(settings).rpcHttp, rpcWs: l2Urls(settings).rpcWs }, healthUrl: health.l2 },
  ];
  // The method policy's per-chain additions (gateway.methodPolicy.<path>).
  const policy = settings.gateway.methodPolicy ?? {};
  const cache = settings.gateway.cache?.chains ?? {};
  return [...builtIn, ...settings.gateway.chains.map((c) => ({ ...c }))].map((c) => ({ ...c, ...policy[c.path], ...(cache[c.path] === false ? { cache: false } : {}) }));
}
