/** The served surface as each reader needs it: the `endpoints` output and the smoke plan. Pure. */
import type { StackSettings } from "../config/index.js";
import type { SmokeCheck } from "../smoke/plan.js";
import { INTERFACES, type GatewayChain, type Interface } from "../gateway/types.js";
import { chainInterfaces, servedSurface, versionedUrls, type Surface, type SurfaceInterface } from "./surface.js";

export interface ChainEndpoints {
  readonly chainId: string;
  /** URLs with `<KEY>` standing for a project key. */
  readonly endpoints: Readonly<Record<string, string>>;
}

/**
 * The names the `endpoints` output has always used for the surface's interfaces: a fixed
 * renaming, so the output and the provider manifest name the same URLs.
 */
export const ENDPOINT_NAMES: Readonly<Record<SurfaceInterface, string>> = {
  "rpc-http": "rpcHttp",
  "tendermint-uri": "tendermintUri",
  rest: "rest",
  rpc: "rpcWs",
  "tendermint-rpc": "tendermintRpc",
  "tendermint-ws": "tendermintWs",
  "rest-host": "restHost",
  grpc: "grpc",
};

/** What users call, per chain and interface (no key in it), keyed by chain path. */
export const publicEndpoints = (settings: StackSettings) => endpointsOf(servedSurface(settings));

export function endpointsOf(surface: Surface): Record<string, ChainEndpoints> {
  return Object.fromEntries(
    surface.chains.map((c) => [
      c.path,
      { chainId: c.chainId, endpoints: { ...Object.fromEntries(c.interfaces.map((i) => [ENDPOINT_NAMES[i.name], i.url])), ...versionedUrls(c) } },
    ]),
  );
}

const isPathWord = (i: SurfaceInterface): i is Interface => (INTERFACES as readonly string[]).includes(i);

/** The post-deploy relays: one per chain and gateway path interface. */
export function smokePlan(chains: readonly GatewayChain[]): SmokeCheck[] {
  return chains.flatMap((c) => chainInterfaces(c).filter(isPathWord).map((iface) => ({ chainId: c.chainId, path: c.path, kind: c.kind, iface })));
}
