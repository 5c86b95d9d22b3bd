/**
 * The provider manifest: what an operator submits when applying to a provider program: each
 * chain with its id, path and public URLs (never a key), the hardware tier, the client versions
 * and the geolocation. Pure.
 */
import type { StackSettings } from "../config/index.js";
import { gatewayChains } from "../plan/index.js";

export interface ProviderManifest {
  readonly network: string;
  readonly gateway: string;
  readonly geolocation: string | null;
  readonly tier: { readonly name: string; readonly cores: number; readonly memoryGiB: number; readonly diskGB: number; readonly bandwidthMbps: number };
  readonly clients: Readonly<Record<string, string>>;
  readonly chains: readonly {
    readonly chainId: string;
    readonly path: string;
    readonly kind: string;
    readonly source: "own node" | "relayed upstream";
    readonly interfaces: Readonly<Record<string, string>>;
  }[];
}

export function providerManifest(settings: StackSettings): ProviderManifest {
  const host = settings.gateway.domain ?? "localhost";
  const builtIn = new Set([settings.network.chains.l1.chainId, settings.network.chains.l2.chainId]);
  return {
    network: settings.network.name,
    gateway: `https://${host}`,
    geolocation: settings.geolocation ?? null,
    tier: { ...settings.tier },
    clients: {
      execution: settings.l1.executionImage,
      ...(settings.l1.consensusImage ? { consensus: settings.l1.consensusImage } : {}),
      [settings.l2.client]: settings.l2.image,
      ...(settings.indexer.enabled ? { indexer: settings.indexer.image } : {}),
      gateway: settings.gateway.image,
    },
    chains: gatewayChains(settings).map((c) => {
      const i: Record<string, string> = {};
      const base = `https://${host}/gateway/${c.path}`;
      if (c.upstreams.rpcHttp) i["rpc-http"] = `${base}/rpc-http/<KEY>`;
      if (c.upstreams.rest) i.rest = `${base}/rest/<KEY>`;
      if (c.upstreams.rpcWs) i.rpc = `wss://${host}/gateway/${c.path}/rpc/<KEY>?secret=null`;
      if (c.hostnames?.tendermintRpc) i.tendermintRpc = `https://${c.hostnames.tendermintRpc}`;
      if (c.hostnames?.rest) i.restHost = `https://${c.hostnames.rest}`;
      if (c.hostnames?.grpc) i.grpc = `${c.hostnames.grpc}:443`;
      return { chainId: c.chainId, path: c.path, kind: c.kind, source: builtIn.has(c.chainId) ? "own node" : "relayed upstream", interfaces: i };
    }),
  };
}
