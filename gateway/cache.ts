/**
 * The response cache: which answers may be kept (a policy by finality per chain kind, as data),
 * the generated cache.lua, and the frontend, global and metrics lines that hook it in. Pure.
 *
 * The cache sits after the method policy, the key check, the rate limits and the node-health
 * gates: a request reaches it only once all of those have let it through.
 */
import { CHECK_AGENT, parseUpstream } from "./upstreams.js";
import { anon, req, type Directive, type Rule } from "./model.js";
import { NODE_DOWN, exactPath, on } from "./routes.js";
import { CACHE_LUA } from "./cacheLua.js";
import { luaLiteral } from "./luaLiteral.js";
import type { GatewayChain, GatewayOptions } from "./types.js";

/** How an argument is made canonical; a spelling the node might treat differently is not cached. */
export type CacheArg = "qty" | "bool" | "hash" | "felt" | "block";

export interface CacheRule {
  /** The positional arguments, exactly this many (extra or missing ones go to the node). */
  readonly args: readonly CacheArg[];
  /** Starknet named parameters, in positional order. */
  readonly names?: readonly string[];
  /** Cached only when argument `num` (1-based) is a block number at or below the final block. */
  readonly num?: number;
  /** Cached only when this field of the result is a block number at or below the final block. */
  readonly final?: string;
  /** Cached only when this field of the result is "ACCEPTED_ON_L1". */
  readonly status?: string;
  /** Cached only once the answer to this method for the same first argument is held. */
  readonly after?: string;
}

const always: CacheRule = { args: [] };
const byBlock = (names: string[] = ["block_id"]): CacheRule => ({ args: ["block"], names, status: "status" });
const atFinal = (second: CacheArg, names: string[]): CacheRule => ({ args: ["block", second], names, num: 1 });

/**
 * What is cached, per chain kind. Never: tags (`latest`, `pending`, `safe`, `pre_confirmed`,
 * `l1_accepted`), calls and sends, errors and null results; everything not listed goes to the node.
 * Ethereum finality: the node's `finalized` block tag (Ethereum execution API's block tags; geth
 * rpc/types.go FinalizedBlockNumber), polled with eth_getBlockByNumber("finalized").
 * Starknet finality: a block's own `status` ("ACCEPTED_ON_L1", in every spec version), a receipt's
 * `finality_status`, and for reads at a block number the `l1_accepted` block tag of the newer
 * spec versions (polled; whether Juno v0.17.0 and Pathfinder v0.24.1 answer it is unverified: a
 * node that refuses it gets no class cached by number, nothing else changes).
 */
export const CACHE_POLICY: Record<"evm" | "starknet", Record<string, CacheRule>> = {
  evm: {
    eth_chainId: always,
    net_version: always,
    eth_getBlockByNumber: { args: ["qty", "bool"], num: 1 },
    eth_getBlockTransactionCountByNumber: { args: ["qty"], num: 1 },
    eth_getTransactionByBlockNumberAndIndex: { args: ["qty", "qty"], num: 1 },
    eth_getBlockByHash: { args: ["hash", "bool"], final: "number" },
    eth_getTransactionByHash: { args: ["hash"], final: "blockNumber" },
    eth_getTransactionReceipt: { args: ["hash"], final: "blockNumber" },
  },
  starknet: {
    starknet_chainId: always,
    starknet_specVersion: always,
    starknet_getBlockWithTxHashes: byBlock(),
    starknet_getBlockWithTxs: byBlock(),
    starknet_getBlockWithReceipts: byBlock(),
    starknet_getTransactionReceipt: { args: ["felt"], names: ["transaction_hash"], status: "finality_status" },
    starknet_getTransactionByHash: { args: ["felt"], names: ["transaction_hash"], after: "starknet_getTransactionReceipt" },
    starknet_getClass: atFinal("felt", ["block_id", "class_hash"]),
    starknet_getClassAt: atFinal("felt", ["block_id", "contract_address"]),
    starknet_getClassHashAt: atFinal("felt", ["block_id", "contract_address"]),
  },
};

export interface CacheOptions {
  /** Bytes the cache may hold in all (answers, keys and per-entry overhead): a hard bound. */
  readonly maxBytes: number;
  /** Largest answer stored; larger ones are relayed and not kept. */
  readonly maxObjectBytes: number;
  /** How often each chain's final block is polled. */
  readonly pollIntervalMs: number;
}

export const CACHE_DEFAULTS = { maxObjectBytes: 4 * 1024 * 1024, pollIntervalMs: 2000 } as const;
/**
 * Below a node's `finalized` tag there is nothing to guess; a chain whose node has none (some
 * extra EVM chains) uses this depth below its head: 64 blocks is two Ethereum epochs, the depth
 * at which a PoS block is finalized when the chain is healthy.
 */
export const FALLBACK_DEPTH = 64;
/** What the cache's own polls send as User-Agent, so node logs (and tests) can tell them apart. */
export const CACHE_POLL_AGENT = `${CHECK_AGENT}-cache-poll`;
export const CACHE_FILE = "cache.lua";
/**
 * Hits up to this size are answered by the lookup action itself (txn:done with a reply, which
 * must fit in one buffer: HAProxy's default tune.bufsize is 16 KiB, of which tune.maxrewrite
 * 8 KiB stay reserved); larger ones are streamed by the service.
 */
export const REPLY_MAX = 7 * 1024;

/** Chains whose JSON-RPC over HTTP is cached: evm and starknet with an rpcHttp upstream, unless switched off. */
export const cachedChains = (chains: readonly GatewayChain[], o: GatewayOptions): GatewayChain[] =>
  o.cache ? chains.filter((c) => (c.kind === "evm" || c.kind === "starknet") && c.upstreams.rpcHttp && c.cache !== false) : [];

export function cacheLua(chains: readonly GatewayChain[], o: GatewayOptions): string {
  const cached = cachedChains(chains, o);
  const table = Object.fromEntries(
    cached.map((c) => {
      const u = parseUpstream(c.upstreams.rpcHttp!);
      const url = `${u.tls ? "https" : "http"}://${u.host.includes(":") ? `[${u.host}]` : u.host}:${u.port}${u.basePath || "/"}`;
      return [c.path, { kind: c.kind, url, depth: c.kind === "evm" ? FALLBACK_DEPTH : 0 }];
    }),
  );
  return [
    "-- Generated by rpcstack: the response cache of the JSON-RPC chains (see gateway/cache.ts).",
    `CHAINS = ${luaLiteral(table)}`,
    `RULES = ${luaLiteral(CACHE_POLICY)}`,
    "STATS = {}",
    `BUDGET, MAX_OBJECT, POLL_MS = ${o.cache!.maxBytes}, ${o.cache!.maxObjectBytes}, ${o.cache!.pollIntervalMs}`,
    `POLL_AGENT = ${JSON.stringify(CACHE_POLL_AGENT)}`,
    `REPLY_MAX = ${REPLY_MAX}`,
    CACHE_LUA,
  ].join("\n");
}

/**
 * Global lines: the Lua file, and the httpclient's CA (only with an https upstream, as the
 * servers' ca-file: an image without the bundle must still start) and resolver.
 */
export function cacheGlobal(chains: readonly GatewayChain[], o: GatewayOptions): Directive[] {
  const cached = cachedChains(chains, o);
  if (!cached.length) return [];
  return [
    ["lua-load", `${o.filesDir}/${CACHE_FILE}`],
    ...(cached.some((c) => parseUpstream(c.upstreams.rpcHttp!).tls) ? [["httpclient.ssl.ca-file", o.caFile]] : []),
    ...(o.resolver ? [["httpclient.resolvers.id", "docker"]] : []),
  ];
}

/** Frontend rules, after every check: look the call up, and let the service answer hits and misses. */
export function cacheRules(chains: readonly GatewayChain[], o: GatewayOptions): Rule[] {
  const cached = cachedChains(chains, o);
  if (!cached.length) return [];
  return [
    ...cached.map((c, i) =>
      req(
        ["lua.rpc_cache_lookup", c.path],
        // Only bodies that name a cacheable method reach Lua (a cheap native test; a body that
        // spells its method otherwise simply goes to the node).
        [...on(c, "rpc-http"), "METH_POST", ...exactPath, ...(c.statusUrl ? ["!", ...NODE_DOWN] : []), ...anon("req.body", "-m", "sub", ...Object.keys(CACHE_POLICY[c.kind as "evm" | "starknet"]))],
        i ? undefined : "Response cache: after the policy, key, rate and health checks (a hit skips none of them).",
      ),
    ),
    req(["use-service", "lua.rpc_cache"], anon("var(txn.cache_tok)", "-m", "found")),
  ];
}

/** The cache's counters on the private metrics listener (HAProxy's exporter takes no Lua metrics). */
export const cacheMetricsDirectives = (chains: readonly GatewayChain[], o: GatewayOptions): Directive[] =>
  cachedChains(chains, o).length ? [["http-request", "use-service", "lua.rpc_cache_metrics", "if", ...anon("path", "/metrics/cache")]] : [];
