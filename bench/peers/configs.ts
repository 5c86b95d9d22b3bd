/**
 * The configurations the peers run with in the bench: each one's documented way to do the job our
 * gateway does in front of one node (a key on every call, a rate limit, a method policy where the
 * peer has one, its cache on), as typed models serialized by the format's own library (YAML for
 * eRPC, TOML for proxyd). Pure: no files, no processes.
 */
import { stringify as toml } from "smol-toml";
import { stringify as yaml } from "yaml";

export interface PeerUpstream {
  /** The node's JSON-RPC URL over HTTP (and WebSocket, where the peer relays it). */
  readonly http: string;
  readonly ws?: string;
  /** The node's EIP-155 chain id (geth --dev: 1337). */
  readonly chainId: number;
  /** Seconds between the node's blocks: cache lifetimes follow it. */
  readonly blockSeconds: number;
}

export interface PeerListen {
  readonly port: number;
  readonly metricsPort: number;
  /** proxyd's WebSocket listener is a port of its own. */
  readonly wsPort?: number;
}

export interface PeerTls {
  readonly certFile: string;
  readonly keyFile: string;
}

/** What every peer enforces like the gateway: the project key, and a rate per key far above the load. */
export interface PeerPolicy {
  readonly key: string;
  readonly ratePerSecond: number;
  /** Largest request body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** Cache size in bytes (the gateway's cache budget in the same run). */
  readonly cacheBytes: number;
}

/**
 * Methods proxyd relays: the Ethereum execution API's public reads and sends (proxyd is an
 * allow-list; these are what the gateway's deny-list lets through for an EVM chain, minus
 * filters, which proxyd does not keep per client).
 */
export const PROXYD_METHODS = [
  "eth_blockNumber", "eth_call", "eth_chainId", "eth_estimateGas", "eth_feeHistory", "eth_gasPrice",
  "eth_getBalance", "eth_getBlockByHash", "eth_getBlockByNumber", "eth_getBlockReceipts",
  "eth_getBlockTransactionCountByHash", "eth_getBlockTransactionCountByNumber", "eth_getCode", "eth_getLogs",
  "eth_getProof", "eth_getStorageAt", "eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByBlockNumberAndIndex",
  "eth_getTransactionByHash", "eth_getTransactionCount", "eth_getTransactionReceipt", "eth_maxPriorityFeePerGas",
  "eth_sendRawTransaction", "eth_syncing", "net_version", "web3_clientVersion",
] as const;

/** Over WebSocket proxyd also takes subscriptions (relayed to the node on the client's own connection). */
export const PROXYD_WS_METHODS = [...PROXYD_METHODS, "eth_subscribe", "eth_unsubscribe"] as const;

/**
 * eRPC: one project with the key as a `secret` auth strategy bound to a per-IP rate budget, one
 * network, the node as its one upstream, TLS on its listener, and an in-memory cache in the shape
 * its cache docs give for a memory connector ("intentionally no realtime caching": finalized and
 * unknown-finality answers kept for good, unfinalized ones for two block times, nothing at the tip,
 * because without a connector that reports block times the realtime age gate fails open).
 */
export function erpcConfig(up: PeerUpstream, listen: PeerListen, tls: PeerTls | undefined, p: PeerPolicy): string {
  const mem = "memory-cache";
  const cfg = {
    logLevel: "warn",
    server: {
      httpHostV4: "127.0.0.1",
      httpPortV4: listen.port,
      listenV6: false,
      maxTimeout: "30s",
      // Its defaults wait 10 s before and 10 s after shutting down: it outlived the bench by 20 s.
      waitBeforeShutdown: "0s",
      waitAfterShutdown: "0s",
      ...(tls ? { tls: { enabled: true, certFile: tls.certFile, keyFile: tls.keyFile } } : {}),
    },
    metrics: { enabled: true, hostV4: "127.0.0.1", port: listen.metricsPort, listenV6: false },
    database: {
      evmJsonRpcCache: {
        connectors: [{ id: mem, driver: "memory", memory: { maxItems: 100_000, maxTotalSize: `${Math.floor(p.cacheBytes / (1024 * 1024))}MB` } }],
        policies: [
          { connector: mem, network: "*", method: "*", finality: "finalized", empty: "ignore", ttl: 0 },
          { connector: mem, network: "*", method: "*", finality: "unfinalized", empty: "ignore", ttl: `${2 * up.blockSeconds}s` },
          { connector: mem, network: "*", method: "*", finality: "unknown", empty: "ignore", ttl: 0 },
        ],
      },
    },
    rateLimiters: { budgets: [{ id: "per-key", rules: [{ method: "*", maxCount: p.ratePerSecond, period: "second", perIP: true }] }] },
    projects: [
      {
        id: "main",
        auth: { strategies: [{ type: "secret", rateLimitBudget: "per-key", secret: { id: "bench", value: p.key } }] },
        networks: [{ architecture: "evm", evm: { chainId: up.chainId } }],
        upstreams: [{ id: "node", endpoint: up.http, evm: { chainId: up.chainId } }],
      },
    ],
  };
  return yaml(cfg);
}

/** Where a client calls eRPC for this chain with the key (`?secret=`, eRPC's query form of the token). */
export const erpcPath = (up: PeerUpstream, key: string) => `/main/evm/${up.chainId}?secret=${encodeURIComponent(key)}`;

/**
 * proxyd: the key as its authentication path segment, the method allow-list (`rpc_method_mappings`,
 * and `ws_method_whitelist` for WebSocket), the frontend rate limit, its cache on (in memory without
 * Redis; it keeps only answers keyed by hash, plus eth_chainId and net_version) and the node as the
 * one backend. proxyd has no TLS listener: it runs plain, behind a TLS terminator in production.
 */
export function proxydConfig(up: PeerUpstream, listen: PeerListen, p: PeerPolicy): string {
  if (up.ws !== undefined && listen.wsPort === undefined) throw new Error("proxyd: a WebSocket upstream needs a wsPort to listen on");
  const cfg = {
    ws_backend_group: "node",
    ws_method_whitelist: [...PROXYD_WS_METHODS],
    server: {
      rpc_host: "127.0.0.1",
      rpc_port: listen.port,
      ws_host: "127.0.0.1",
      ws_port: listen.wsPort ?? 0,
      max_body_size_bytes: p.maxBodyBytes,
      max_concurrent_rpcs: 1000,
      log_level: "warn",
    },
    metrics: { enabled: true, host: "127.0.0.1", port: listen.metricsPort },
    cache: { enabled: true },
    rate_limit: { base_rate: p.ratePerSecond, base_interval: "1s" },
    backend: { response_timeout_seconds: 30, max_response_size_bytes: 5 * 1024 * 1024, max_retries: 0, out_of_service_seconds: 10 },
    backends: { node: { rpc_url: up.http, ...(up.ws ? { ws_url: up.ws } : {}), max_rps: 0, max_ws_conns: 0 } },
    backend_groups: { node: { backends: ["node"] } },
    authentication: { [p.key]: "bench" },
    rpc_method_mappings: Object.fromEntries(PROXYD_METHODS.map((m) => [m, "node"])),
  };
  return toml(cfg);
}

/** Where a client calls proxyd with the key (HTTP POST, or the WebSocket listener). */
export const proxydPath = (key: string) => `/${encodeURIComponent(key)}`;
