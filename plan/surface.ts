/**
 * What the stack serves, at which URL: the served chains, each with its interfaces, public URLs,
 * upstreams, health probe and head method, and the public host. The gateway's chains, the
 * `endpoints` output, the provider manifest and the smoke plan are views of it. Pure.
 */
import { MAIN_HOST, publicHost, type ExtraChain, type L1Endpoint, type StackSettings } from "../config/index.js";
import { HEAD_METHOD } from "../gateway/heads.js";
import { INTERFACES, type GatewayChain, type Interface } from "../gateway/types.js";
import { dataVolumes, diskCheckUrl, l1Urls, l2Urls, nodeCheckUrl, nodeVerdictUrl, placedNodes, servedBySeveral, syncHealthUrls } from "../services/index.js";

/**
 * The one vocabulary: the gateway path words, the Tendermint URI form of `rpc-http`, and the
 * public-hostname forms of Cosmos chains.
 */
export const SURFACE_INTERFACES = [...INTERFACES, "tendermint-uri", "tendermint-rpc", "tendermint-ws", "rest-host", "grpc"] as const;
export type SurfaceInterface = (typeof SURFACE_INTERFACES)[number];

export interface ServedChain extends GatewayChain {
  readonly source: "own node" | "relayed upstream";
  readonly headMethod: string;
  /** Public URL per interface, `<KEY>` standing for a project key, in chainInterfaces' order. */
  readonly interfaces: readonly { readonly name: SurfaceInterface; readonly url: string }[];
}

export interface Surface {
  /** The public host of the gateway, and its base URL. */
  readonly host: string;
  readonly baseUrl: string;
  readonly chains: readonly ServedChain[];
}

/**
 * Which interfaces a chain serves: the path words for its upstreams, the host forms for its
 * hostnames, in the order written here (JSON-RPC over HTTP and its URI form first).
 */
export function chainInterfaces(c: GatewayChain): SurfaceInterface[] {
  const has: Record<SurfaceInterface, unknown> = {
    "rpc-http": c.upstreams.rpcHttp,
    "tendermint-uri": c.upstreams.rpcHttp && c.kind === "cosmos",
    rest: c.upstreams.rest,
    rpc: c.upstreams.rpcWs,
    "tendermint-rpc": c.hostnames?.tendermintRpc,
    "tendermint-ws": c.hostnames?.tendermintRpc,
    "rest-host": c.hostnames?.rest,
    grpc: c.hostnames?.grpc,
  };
  return (Object.keys(has) as SurfaceInterface[]).filter((i) => has[i]);
}

function interfaceUrl(name: SurfaceInterface, c: GatewayChain, host: string): string {
  const base = `https://${host}/gateway/${c.path}`;
  const hn = c.hostnames ?? {};
  switch (name) {
    case "rpc-http":
      return `${base}/rpc-http/<KEY>`;
    case "tendermint-uri":
      return `${base}/rpc-http/<KEY>/status`;
    case "rest":
      return `${base}/rest/<KEY>/<rest_path>`;
    case "rpc":
      return `wss://${host}/gateway/${c.path}/rpc/<KEY>?secret=null`;
    case "tendermint-rpc":
      return `https://${hn.tendermintRpc}`;
    case "tendermint-ws":
      return `wss://${hn.tendermintRpc}/websocket`;
    case "rest-host":
      return `https://${hn.rest}`;
    case "grpc":
      return `${hn.grpc}:443`;
  }
}

/** A Starknet chain's versioned URLs (gateway/specVersions.ts), by endpoint name: `rpcHttp_v0_9`, `rpcWs_v0_9`, ... */
export function versionedUrls(c: ServedChain): Record<string, string> {
  const urls = Object.fromEntries(c.interfaces.map((i) => [i.name, i.url]));
  return Object.fromEntries(
    Object.keys(c.specVersions?.paths ?? {}).flatMap((v) => [
      ...(urls["rpc-http"] ? [[`rpcHttp_${v}`, `${urls["rpc-http"]}/${v}`]] : []),
      ...(urls.rpc ? [[`rpcWs_${v}`, urls.rpc.replace("?", `/${v}?`)]] : []),
    ]),
  );
}

/**
 * Stands in for an external L1's secret URLs where only the chain's shape matters (the endpoints,
 * the manifest, the smoke plan, the keyless compile); the Gateway component compiles HAProxy's
 * file with the real ones, as a secret.
 */
export const EXTERNAL_L1_SHAPE: L1Endpoint = { rpcHttp: "https://external-l1.invalid", rpcWs: "wss://external-l1.invalid" };

/** Whether the gateway relays an external L1, so that haproxy.cfg names its (secret) URL. */
export const relaysExternalL1 = (settings: StackSettings): boolean => settings.l1.external && settings.gateway.relayExternalL1;

/** Docker hosts run a disk watcher in front of each node's check; a cluster has none (its kubelet reports volume use). */
const diskWatched = (settings: StackSettings) => settings.host.kind !== "kubernetes";

/**
 * A layer served by several nodes: each is a server of its chain's backends, checked through its
 * host's disk watcher (its volumes, then its verdict: in rotation or not); the first stands for
 * the chain's upstreams and health.
 */
function severalNodes(settings: StackSettings, layer: "l1" | "l2"): Pick<GatewayChain, "upstreams" | "healthUrl" | "nodes"> | Record<string, never> {
  if (!servedBySeveral(settings, layer)) return {};
  const nodes = placedNodes(settings)[layer].map((n) => ({ name: n.name, rpcHttp: n.rpcHttp, rpcWs: n.rpcWs, healthUrl: diskWatched(settings) ? nodeCheckUrl(settings, n) : nodeVerdictUrl(settings, MAIN_HOST, n) }));
  return { upstreams: { rpcHttp: nodes[0].rpcHttp, rpcWs: nodes[0].rpcWs }, healthUrl: nodes[0].healthUrl, nodes };
}

/**
 * A chain of `gateway.chains`: with replicas, its nodes are `upstreams` (node1) and each replica
 * (node2, ...), each checked by the chain kind's own probe on its Tendermint RPC or JSON-RPC URL.
 */
export function extraChain({ replicas, ...c }: ExtraChain): GatewayChain {
  if (!replicas?.length) return { ...c };
  return { ...c, nodes: [c.upstreams, ...replicas].map((u, i) => ({ name: `node${i + 1}`, ...u, ownHost: true })) };
}

/** The chains the gateway relays: the stack's own nodes (or an external L1), then `gateway.chains`, with their method policy. */
function gatewayChainsOf(settings: StackSettings, l1Endpoint: L1Endpoint): GatewayChain[] {
  const { l1, l2 } = settings.network.chains;
  const health = syncHealthUrls(settings);
  const l2u = l2Urls(settings);
  // An external L1 is relayed to (and checked through readiness's /ready/l1), unless turned off.
  const l1Upstreams = settings.l1.external ? l1Endpoint : { rpcHttp: l1Urls().rpcHttp, rpcWs: l1Urls().rpcWs };
  const relayL1 = !settings.l1.external || relaysExternalL1(settings);
  // Where a node keeps data, the disk watcher answers its health check: 503 while that volume is
  // nearly full, else the node's own check's status (services/disk.ts).
  const volumes = diskWatched(settings) ? dataVolumes(settings) : { l1: [], l2: [] };
  const builtIn: GatewayChain[] = [
    ...(relayL1 ? [{ ...l1, upstreams: l1Upstreams, healthUrl: volumes.l1.length ? diskCheckUrl("l1") : health.l1, ...severalNodes(settings, "l1") }] : []),
    // The watcher also says why the node is out (restoring from a snapshot and how far, disk full):
    // the 503's body. It speaks for the layer's first node only, so not where the layer has several.
    {
      ...l2,
      upstreams: { rpcHttp: l2u.rpcHttp, rpcWs: l2u.rpcWs },
      // Every node runs the same release: the versions it serves are the chain's.
      specVersions: { pinned: settings.l2.rpcVersion, paths: settings.l2.specVersions },
      ...(volumes.l2.length ? { healthUrl: diskCheckUrl("l2"), ...(servedBySeveral(settings, "l2") ? {} : { statusUrl: diskCheckUrl("l2") }) } : { healthUrl: health.l2 }),
      ...severalNodes(settings, "l2"),
    },
  ];
  // The method policy's per-chain additions (gateway.methodPolicy.<path>).
  const policy = settings.gateway.methodPolicy ?? {};
  // The response cache is on for every chain unless gateway.cache.chains.<path> is false.
  const cache = settings.gateway.cache?.chains ?? {};
  return [...builtIn, ...settings.gateway.chains.map(extraChain)].map((c) => ({ ...c, ...policy[c.path], ...(cache[c.path] === false ? { cache: false } : {}) }));
}

export function servedSurface(settings: StackSettings, l1Endpoint: L1Endpoint = EXTERNAL_L1_SHAPE): Surface {
  const host = publicHost(settings);
  const own = new Set([...(settings.l1.external ? [] : [settings.network.chains.l1.chainId]), settings.network.chains.l2.chainId]);
  const chains = gatewayChainsOf(settings, l1Endpoint).map((c) => ({
    ...c,
    source: own.has(c.chainId) ? ("own node" as const) : ("relayed upstream" as const),
    headMethod: HEAD_METHOD[c.kind],
    interfaces: chainInterfaces(c).map((name) => ({ name, url: interfaceUrl(name, c, host) })),
  }));
  return { host, baseUrl: `https://${host}`, chains };
}

/** The gateway compiler's view: the chains without the surface's own fields. */
export function compilerChains(surface: Surface): GatewayChain[] {
  return surface.chains.map(({ source: _s, headMethod: _h, interfaces: _i, ...c }) => c);
}

export const gatewayChains = (settings: StackSettings): GatewayChain[] => compilerChains(servedSurface(settings));
