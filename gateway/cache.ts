/**
 * The response cache: which answers may be kept (a policy by finality per chain kind, as data),
 * the data its Lua program (gateway/lua/cache.lua) reads, and the frontend, global and metrics
 * lines that hook it in. Pure.
 *
 * The cache sits after the method policy, the key check, the rate limits and the node-health
 * gates: a request reaches it only once all of those have let it through.
 */
import { CHECK_AGENT, hostHeader, parseUpstream } from "./upstreams.js";
import { afterResponse, anon, req, res, useBackend, type Directive, type Rule, type Section } from "./model.js";
import { NODE_DOWN, exactPath, on, rpcBackend } from "./routes.js";
import { hasNodes } from "./failover.js";
import { internalGate } from "./internal.js";
import { OTHER_VERSION } from "./specVersions.js";
import { statusBody } from "./errors.js";
import { LUA_ENTRIES, luaLoad } from "./lua.js";
import type { GatewayChain, GatewayOptions } from "./types.js";

/**
 * How an argument is made canonical; a spelling the node might treat differently is not cached.
 * `filter`: eth_getLogs' filter object with numbered fromBlock and toBlock (its block number, for
 * `num`, is toBlock), and address and topics if present.
 */
export type CacheArg = "qty" | "bool" | "hash" | "felt" | "block" | "filter";

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
    // Logs of a numbered range that ends at a final block never change.
    eth_getLogs: { args: ["filter"], num: 1 },
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

/**
 * How an answer to a read at the head shows the head: its result a quantity (`qty`) or an integer
 * (`int`), a block object's `number` or `block_number`; `true`: it shows none.
 */
export type MergeHead = "qty" | "int" | "number" | "block_number" | true;

/**
 * The reads at the head that identical calls in flight share (gateway/lua/rpcstack/cache_merge.lua),
 * per chain kind: reads of the chain's state whose answer moves only with a new block. A call at a
 * `pending` or `pre_confirmed` tag (the node's pool, not its head) is never shared; sends, filters,
 * subscriptions, traces and estimates are not listed. An identical call joins one in flight only
 * while the gateway has seen no newer head since that one was sent (docs/cache.md).
 */
export const MERGE_POLICY: Record<"evm" | "starknet", Record<string, MergeHead>> = {
  evm: {
    eth_blockNumber: "qty",
    eth_getBlockByNumber: "number",
    eth_call: true,
    eth_getBalance: true,
    eth_getCode: true,
    eth_getStorageAt: true,
    eth_getTransactionCount: true,
    eth_gasPrice: true,
    eth_maxPriorityFeePerGas: true,
    eth_blobBaseFee: true,
    eth_feeHistory: true,
  },
  starknet: {
    starknet_blockNumber: "int",
    starknet_blockHashAndNumber: "block_number",
    starknet_getBlockWithTxHashes: "block_number",
    starknet_call: true,
    starknet_getNonce: true,
    starknet_getStorageAt: true,
    starknet_getClassHashAt: true,
  },
};

/** The methods whose answers show the head, per kind: their answers the gateway must see or count. */
const headMethods = (kind: "evm" | "starknet") => Object.entries(MERGE_POLICY[kind]).filter(([, how]) => how !== true).map(([m]) => m);

/** The variable HAProxy counts answers to head calls in that the merge did not take (cache.lua share()). */
export const HEADS_UNSEEN = "proc.rpc_heads_unseen";
/** How the answer to a head read the merge sent to the node alone shows its head (cache.lua share()). */
export const HEAD_READ = "txn.head_read";

/**
 * The ids each kind's node answers as calls: only calls with such an id are cached (gateway/lua/
 * rpcstack/cache_keys.lua IDS). geth answers any id but an object or an array (rpc/json.go
 * hasValidID), but hardhat answers null and booleans with -32600 (hardhat 2.29, measured), and an
 * EVM chain's node may be either: strings and numbers. Juno takes null for a notification and
 * refuses booleans and numbers with a "." (jsonrpc/server.go isSane), Pathfinder wants integers or
 * strings.
 */
export const CACHE_IDS = { evm: "stringOrNumber", starknet: "stringOrInteger" } as const;

export const CACHE_DEFAULTS = { maxObjectBytes: 4 * 1024 * 1024, pollIntervalMs: 2000 } as const;
/**
 * Below a node's `finalized` tag there is nothing to guess; a chain whose node has none (some
 * extra EVM chains) uses this depth below its head: 64 blocks is two Ethereum epochs, the depth
 * at which a PoS block is finalized when the chain is healthy.
 */
export const FALLBACK_DEPTH = 64;
/** What the cache's own polls send as User-Agent, so node logs (and tests) can tell them apart. */
export const CACHE_POLL_AGENT = `${CHECK_AGENT}-cache-poll`;
/**
 * Hits up to this size are answered by the lookup action itself (txn:done with a reply, which
 * must fit in one buffer: HAProxy's default tune.bufsize is 16 KiB, of which tune.maxrewrite
 * 8 KiB stay reserved); larger ones are streamed by the service.
 */
export const REPLY_MAX = 7 * 1024;
/**
 * Most misses the cache fetches at once. Each fetch holds its whole answer in Lua several times
 * over until it is sent (the httpclient's buffer, the body, its halves) and glibc keeps what the
 * process once held, so the cache fetches a bounded number at once and a miss beyond it is relayed
 * to the node as without the cache (not kept). A miss does not wait for a place: a waiting call
 * holds a buffer of tune.bufsize (1 MiB + 64 KiB by default), which made HAProxy's memory follow
 * the number of clients missing at once.
 */
export const MAX_FETCHES = 8;
/** Answers in flight may hold this share of the budget (estimated per method from its last answers), at least one largest answer. */
export const FLIGHT_SHARE = 1 / 16;

/**
 * Where the cache's own requests (misses and finality polls) enter HAProxy: a listener on an
 * abstract socket (Linux; one per gateway, named by its HTTPS port) that hands each chain's to the
 * backend that relays its JSON-RPC. So they go the relay's way (TLS, Host, the node's health),
 * and a node's URL, a secret for an external L1, stays in haproxy.cfg: Lua names only the chain,
 * and no URL reaches the httpclient's log lines.
 */
export const cacheFetchAddress = (o: GatewayOptions) => `abns@rpcstack-cache-${o.httpsPort}`;
/** What the httpclient asks for (a chain's path after it): neither its host nor its path reaches a node. */
export const CACHE_FETCH_URL = "http://rpcstack-cache/";

/** Chains whose JSON-RPC over HTTP is cached: evm and starknet with an rpcHttp upstream, unless switched off. */
export const cachedChains = (chains: readonly GatewayChain[], o: GatewayOptions): GatewayChain[] =>
  o.cache ? chains.filter((c) => (c.kind === "evm" || c.kind === "starknet") && c.upstreams.rpcHttp && c.cache !== false) : [];

/** What cache.lua reads from the stack's data (gateway_data.lua): the cached chains, the rules and the budgets. */
export function cacheData(chains: readonly GatewayChain[], o: GatewayOptions) {
  if (!o.cache) return undefined;
  const table = Object.fromEntries(cachedChains(chains, o).map((c) => [c.path, { kind: c.kind, depth: c.kind === "evm" ? FALLBACK_DEPTH : 0 }]));
  return {
    chains: table,
    rules: CACHE_POLICY,
    merge: MERGE_POLICY,
    ids: CACHE_IDS,
    budget: o.cache.maxBytes,
    maxObject: o.cache.maxObjectBytes,
    pollMs: o.cache.pollIntervalMs,
    pollAgent: CACHE_POLL_AGENT,
    replyMax: REPLY_MAX,
    fetch: { url: CACHE_FETCH_URL, dst: cacheFetchAddress(o), max: MAX_FETCHES, bytes: Math.max(o.cache.maxObjectBytes, Math.floor(o.cache.maxBytes * FLIGHT_SHARE)) },
    // The gateway's own answers when the service has no hand-over, the node cannot be reached, or
    // an identical call in flight took longer than any fetch may.
    errors: { internal: statusBody(500), badGateway: statusBody(502), timeout: statusBody(504) },
  };
}

/** Global lines: the Lua program. */
export function cacheGlobal(chains: readonly GatewayChain[], o: GatewayOptions): Directive[] {
  return cachedChains(chains, o).length ? [luaLoad(o, LUA_ENTRIES.cache)] : [];
}

/** The listener the cache's fetches and polls come in by (cacheFetchAddress). */
export function cacheSections(chains: readonly GatewayChain[], o: GatewayOptions): Section[] {
  const cached = cachedChains(chains, o);
  if (!cached.length) return [];
  return [
    {
      header: ["frontend", "cache_fetch"],
      comment: "The response cache's own requests (misses, finality polls), each chain's to the backend that relays its JSON-RPC.",
      // The client's request is logged by the https frontend already.
      directives: [["bind", cacheFetchAddress(o)], ["no", "log"]],
      rules: [
        ...internalGate(),
        // Only cacheable reads and finality polls come this way: where a chain has several nodes,
        // one whose node fails is sent to another (failover.ts).
        ...(cached.some(hasNodes) ? [req(["set-var(txn.rpc_read)", "bool(true)"])] : []),
        // The node's own name, not the httpclient's: geth refuses a Host outside --http.vhosts
        // (default localhost) with 403. A chain with one node gets it in its backend too; one with
        // several gets its URL's (each node of ours takes any, as it takes the clients' own).
        ...cached.map((c) => req(["set-header", "Host", hostHeader(parseUpstream(c.upstreams.rpcHttp!))], anon("path", `/${c.path}`))),
        ...cached.map((c) => useBackend(rpcBackend(c), anon("path", `/${c.path}`))),
        { phase: "default_backend", action: ["be_unrouted"] },
      ],
    },
  ];
}

/** Frontend rules, after every check: look the call up, and let the service answer hits and misses. */
export function cacheRules(chains: readonly GatewayChain[], o: GatewayOptions): Rule[] {
  const cached = cachedChains(chains, o);
  if (!cached.length) return [];
  const kindOf = (c: GatewayChain) => c.kind as "evm" | "starknet";
  return [
    // A head call's answer that the merge does not take is counted (share() in cache.lua unsets
    // the variable for those it takes): merged calls are never given an answer older than it.
    ...cached.filter((c) => headMethods(kindOf(c)).length).map((c) => req(["set-var(txn.head_call)", "bool(true)"], [...on(c, "rpc-http"), "METH_POST", ...anon("req.body", "-m", "sub", ...headMethods(kindOf(c)))])),
    ...cached.map((c, i) =>
      req(
        ["lua.rpc_cache_lookup", c.path],
        // Only bodies that name a cacheable method reach Lua (a cheap native test; a body that
        // spells its method otherwise simply goes to the node).
        [...on(c, "rpc-http"), "METH_POST", ...exactPath, ...(c.specVersions ? ["!", ...OTHER_VERSION] : []), ...(c.statusUrl ? ["!", ...NODE_DOWN] : []), ...anon("req.body", "-m", "sub", ...new Set([...Object.keys(CACHE_POLICY[kindOf(c)]), ...Object.keys(MERGE_POLICY[kindOf(c)])]))],
        i ? undefined : "Response cache: after the policy, key, rate and health checks (a hit skips none of them).",
      ),
    ),
    req(["use-service", "lua.rpc_cache"], anon("var(txn.cache_tok)", "-m", "found")),
    // A head read the merge sent to the node alone: its answer's head is read (it is small, and a
    // block's number comes before its transactions) and seen by the merge like a fetch's, so it
    // stops no fetch from being shared unless it shows a newer head.
    res(["wait-for-body", "time", "1s"], anon(`var(${HEAD_READ})`, "-m", "found")),
    res(["lua.rpc_cache_head"], anon(`var(${HEAD_READ})`, "-m", "found")),
    afterResponse([`set-var(${HEADS_UNSEEN})`, `var(${HEADS_UNSEEN},0),add(1)`], anon("var(txn.head_call)", "-m", "bool")),
  ];
}

/** The cache's counters on the private metrics listener (HAProxy's exporter takes no Lua metrics), where a chain is cached. */
export const cacheMetricsPath = (chains: readonly GatewayChain[], o: GatewayOptions): string | undefined => (cachedChains(chains, o).length ? "/metrics/cache" : undefined);
export function cacheMetricsDirectives(chains: readonly GatewayChain[], o: GatewayOptions): Directive[] {
  const path = cacheMetricsPath(chains, o);
  return path ? [["http-request", "use-service", "lua.rpc_cache_metrics", "if", ...anon("path", path)]] : [];
}
