/**
 * The provider manifest: what an operator submits when applying to a provider program: each
 * chain with its id, path and public URLs (never a key), named in the served surface's one
 * vocabulary (plan/surface.ts), the hardware tier, the client versions and the geolocation. Pure.
 */
import type { StackSettings } from "../config/index.js";
import { servedSurface, versionedUrls, type Surface, type SurfaceInterface } from "../plan/surface.js";

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
    readonly interfaces: Readonly<Partial<Record<SurfaceInterface, string>>>;
    /** Starknet: the URL of each spec version served (`rpcHttp_v0_9`, `rpcWs_v0_9`, ...), as the endpoints output names them. */
    readonly versioned?: Readonly<Record<string, string>>;
  }[];
}

export function providerManifest(settings: StackSettings, surface: Surface = servedSurface(settings)): ProviderManifest {
  return {
    network: settings.network.name,
    gateway: surface.baseUrl,
    geolocation: settings.geolocation ?? null,
    tier: { ...settings.tier },
    clients: {
      execution: settings.l1.executionImage,
      ...(settings.l1.consensusImage ? { consensus: settings.l1.consensusImage } : {}),
      [settings.l2.client]: settings.l2.image,
      ...(settings.indexer.enabled ? { indexer: settings.indexer.image } : {}),
      gateway: settings.gateway.image,
    },
    chains: surface.chains.map((c) => ({
      chainId: c.chainId,
      path: c.path,
      kind: c.kind,
      source: c.source,
      interfaces: Object.fromEntries(c.interfaces.map((i) => [i.name, i.url])),
      ...(c.specVersions ? { versioned: versionedUrls(c) } : {}),
    })),
  };
}
