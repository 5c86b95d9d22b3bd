/** What the gateway compiler takes and returns: the modules of gateway/ import it, it imports none of them. */
import type { ChainKind, ProjectKey, Quota } from "../config/index.js";

export type { ChainKind, ProjectKey, Quota };
/** The interface words of the gateway paths, `/gateway/<chain>/<interface>/<KEY>/...`. */
export const INTERFACES = ["rpc-http", "rest", "rpc"] as const;
export type Interface = (typeof INTERFACES)[number];

export interface GatewayChain {
  readonly path: string;
  readonly chainId: string;
  readonly kind: ChainKind;
  readonly upstreams: { readonly rpcHttp?: string; readonly rpcWs?: string; readonly rest?: string; readonly grpc?: string };
  /** An HTTP URL that answers 200 only while the node is synced (live gating). */
  readonly healthUrl?: string;
  /**
   * Asked, while the node is out, for the body of the chain's 503 (a JSON-RPC style error saying
   * why: restoring from a snapshot and how far, disk full, not synced). Without it: a fixed body.
   */
  readonly statusUrl?: string;
  readonly hostnames?: { readonly tendermintRpc?: string; readonly rest?: string; readonly grpc?: string };
  /** JSON-RPC methods (or `prefix_` families) served although the kind's default list denies them. */
  readonly allowMethods?: readonly string[];
  /** JSON-RPC methods (or `prefix_` families) refused in addition to the kind's default list. */
  readonly denyMethods?: readonly string[];
  /** Response cache for this chain's JSON-RPC over HTTP (evm, starknet); on unless false. */
  readonly cache?: boolean;
  /** Starknet: the spec versions every node of the chain serves (gateway/specVersions.ts). */
  readonly specVersions?: SpecVersions;
  /**
   * Every node of a chain served by several, in order (the first is the one `upstreams` and
   * `healthUrl` name): each is a server of the chain's backends, in rotation while its own
   * health URL answers 200. Absent (or one entry): the chain has one node.
   */
  readonly nodes?: readonly ChainNode[];
}

/** Spec versions (`v0_9`) with their paths on the nodes; `pinned` is the one the unversioned path serves. */
export interface SpecVersions {
  readonly pinned: string;
  readonly paths: Readonly<Record<string, { readonly http: string; readonly ws: string }>>;
}

/** One node of a chain served by several. */
export interface ChainNode {
  /** Its server name in the chain's backends and metrics (the node's service name, e.g. geth-2). */
  readonly name: string;
  readonly rpcHttp?: string;
  readonly rpcWs?: string;
  /** Cosmos: its REST API and gRPC (h2c). */
  readonly rest?: string;
  readonly grpc?: string;
  /**
   * 200 while this node is fit: answering, synced, within the tolerance of the chain's best head.
   * Absent: the chain kind's own probe on this node's URLs, as for a chain of one node.
   */
  readonly healthUrl?: string;
  /**
   * An operator's own node (gateway.chains[].replicas): it may check the Host header (geth's
   * --http.vhosts, a name-based HTTPS front end), so each call carries the node's own host and
   * port, as a chain of one node does, not the client's.
   */
  readonly ownHost?: boolean;
}

export interface GatewayOptions {
  /** Address the public listeners bind (0.0.0.0 in the container, 127.0.0.1 in tests). */
  readonly bindAddress: string;
  readonly httpsPort: number;
  readonly httpPort: number;
  /** The public name of the gateway: port 80 redirects there (never to the client's Host). */
  readonly domain?: string;
  /** Prometheus metrics listener; never published on a public interface. */
  readonly metrics: { readonly address: string; readonly port: number };
  /**
   * PEM with the certificate chain and key, covering the domain and every public hostname. One
   * file, so the ACME client can replace it through the runtime API without a reload.
   */
  readonly certFile: string;
  /** Where the generated files are placed (keys.map, gateway_data.lua, errors/). */
  readonly filesDir: string;
  /** Where HAProxy finds the package's Lua programs: a copy of gateway/lua/ (gateway/lua.ts). */
  readonly luaDir: string;
  /** host:port of the ACME HTTP-01 responder behind /.well-known/acme-challenge/. */
  readonly acmeResponder?: string;
  /** DNS resolver for upstream names at run time (Docker's 127.0.0.11:53). */
  readonly resolver?: string;
  /** Runtime API socket (level admin), for the operator: never shared with another container. */
  readonly adminSocket?: string;
  /**
   * A second runtime API socket on 127.0.0.1 of HAProxy's own network namespace: in a container
   * only the key sync, which shares that namespace, reaches it (services/gateway.ts).
   */
  readonly adminLoopbackPort?: number;
  /** Where the quota map is (gateway/quotas.ts); default `<filesDir>/quotas.map`. In a container: beside the key map. */
  readonly quotaMapFile?: string;
  /** Where the key map is; default `<filesDir>/keys.map`. In a container: a volume the key sync writes. */
  readonly keyMapFile?: string;
  /**
   * Where the ACME client hands HAProxy a renewed certificate (gateway/lua/certs.lua): the one
   * thing that can be asked there, so it is this socket, not the runtime API's, that is shared.
   */
  readonly certSocket?: string;
  /** Requests (JSON-RPC calls, batches counted call by call) per second one key may make, over 10 s. */
  readonly rateLimitPerSecond: number;
  readonly maxBodyBytes: number;
  /** Most calls in one JSON-RPC batch. */
  readonly maxBatch: number;
  /** Origins browsers may call from (`*` for any). */
  readonly corsOrigins: readonly string[];
  /** Wrong or missing keys one client address may send per minute before it gets 429; 0: no limit. */
  readonly wrongKeysPerMinute: number;
  /** Connections one client address may hold open. */
  readonly maxConnectionsPerAddress: number;
  /** WebSocket connections one key may hold open. */
  readonly wsMaxConnectionsPerKey: number;
  /** Subscription calls one WebSocket may make over its life (unsubscribing gives none back: the gateway cannot see whether it worked). */
  readonly wsMaxSubscriptionsPerSocket: number;
  /** Subscriptions one key (on Cosmos hostnames, one address) may hold on its open WebSockets together. */
  readonly wsMaxSubscriptionsPerKey: number;
  /** Filters (eth_newFilter and the like) one key may create in any FILTER_WINDOW_S (gateway/filters.ts). */
  readonly filtersPerKey: number;
  /** A WebSocket with no traffic either way for this long is closed. */
  readonly wsIdleTimeoutSeconds: number;
  /** How often upstream health is checked. */
  readonly checkIntervalMs: number;
  /** CA bundle for https upstreams. */
  readonly caFile: string;
  /** Worker threads; undefined lets HAProxy use every core. */
  readonly threads?: number;
  /** Concurrent connections (HAProxy needs about two file descriptors each). */
  readonly maxConnections: number;
  /** Started as root (ports 80/443, runtime socket), then run as this user and group. */
  readonly runAs?: string;
  /** The response cache (gateway/cache.ts); absent: no cache. */
  readonly cache?: CacheOptions;
  /**
   * Where the readiness service publishes each node's rotation state as Prometheus metrics: served
   * again on the metrics listener at /metrics/nodes. Absent: no such path.
   */
  readonly nodeMetricsUrl?: string;
  /** Badges for front ends (gateway/badges.ts); absent: a badge-shaped key is a wrong key like any other. */
  readonly badges?: BadgeGatewayOptions;
  /**
   * Replicas share per-key rates: each key's rate adds what the other replicas counted, which the
   * usage keeper puts in rate_others.map from the counter store (gateway/limits.ts RATE_OTHERS_FILE).
   */
  readonly sharedRates?: boolean;
}

export interface BadgeGatewayOptions {
  /** host:port of the badge service, served at /badge. */
  readonly service: string;
  /** Projects whose badges are accepted: removing one stops its badges at once. */
  readonly projects: readonly string[];
  /** Badges one client address may ask for per minute. */
  readonly perAddressPerMinute: number;
  /**
   * Calls per second of each project whose badges have a rate of their own (counted under
   * `badge:<projectId>`); a project not named here has rateLimitPerSecond, like a key.
   */
  readonly ratePerSecond?: Readonly<Record<string, number>>;
}

export interface CacheOptions {
  /** Bytes the cache may hold in all (answers, keys and per-entry overhead): a hard bound. */
  readonly maxBytes: number;
  /** Largest answer stored; larger ones are relayed and not kept. */
  readonly maxObjectBytes: number;
  /** How often each chain's final block is polled. */
  readonly pollIntervalMs: number;
}

/** What the compiler returns: nothing in it depends on a project key. */
export interface GatewayCompiled {
  readonly config: string;
  /** File name (relative to filesDir) -> contents: the Lua programs' data and the error pages. */
  readonly files: Readonly<Record<string, string>>;
  /** What is served, for tests: route -> backend. */
  readonly routes: readonly Route[];
  /** Environment the HAProxy process needs for the buffers this config asks for. */
  readonly environment: Readonly<Record<string, string>>;
  /** What the private metrics listener serves: HAProxy's exporter, and the cache's counters where a chain is cached. */
  readonly metricsPaths: { readonly exporter: string; readonly cache?: string };
  /** HAProxy's memory in MiB: what it asks for (its own and the cache's budget), and what it may reach with every buffer allocated. */
  readonly memoryMiB: { readonly request: number; readonly limit: number };
}

/** The compiled configuration with the key map among its files (keys.map holds hashed project keys). */
export type GatewayBuild = GatewayCompiled;

export interface Route {
  readonly chain: string;
  readonly iface: Interface | "hostname";
  readonly backend: string;
  readonly detail: string;
}

/** Defaults for the gateway's limits, shared by config resolution, tests and the bench. */
export const GATEWAY_LIMIT_DEFAULTS = {
  corsOrigins: ["*"],
  // geth's own default batch limit (rpc.batch-request-limit) is 1000 calls.
  maxBatch: 1000,
  wrongKeysPerMinute: 60,
  maxConnectionsPerAddress: 64,
  wsMaxConnectionsPerKey: 100,
  wsMaxSubscriptionsPerSocket: 32,
  wsMaxSubscriptionsPerKey: 1000,
  filtersPerKey: 100,
  wsIdleTimeoutSeconds: 300,
} as const;
