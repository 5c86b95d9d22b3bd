/**
 * The JSON-RPC method policy: each chain kind has a default deny list (node administration,
 * debugging, signing with node-held keys, dev-node state changes), which a chain's
 * `allowMethods` opens and `denyMethods` extends. An entry ending in `_` is a family
 * (`debug_`), any other entry one method; matching ignores case, as some servers do.
 *
 * Enforced on JSON-RPC bodies (POSTs, and any body sent to a chain's rpc-http paths or a Tendermint
 * RPC hostname whatever its method), single calls and every call of a batch:
 * - a body that is one JSON object without a backslash and with one "method" key is checked
 *   natively (json_query), which costs little on the common path;
 * - anything else (batches, escapes, repeated or differently cased keys, which Go's decoder
 *   would match case-insensitively and take the last of) is parsed whole by the Lua action in
 *   gateway/lua/policy.lua: it counts the calls, checks each method, and refuses what it cannot parse.
 * WebSocket messages travel in an upgraded tunnel that HAProxy does not parse: the ws_limit filter
 * reads each one with the same lists (wsPolicyData, gateway/lua/limits.lua).
 * A refused call is answered with its own id and method, a batch holding one as an array (batch.ts).
 */
import { refusalRules } from "./batch.js";
import { INVALID_REQUEST, PARSE_ERROR, refuse } from "./errors.js";
import { hasNodes } from "./failover.js";
import { FILTER_CREATOR, SUBSCRIPTION, readSet } from "./methods.js";
import { anon, req, type Cond, type Rule } from "./model.js";
import { exactPath, hostIs, on } from "./routes.js";
import type { ChainKind, GatewayChain } from "./types.js";

export const DEFAULT_DENY: Record<ChainKind, readonly string[]> = {
  // geth/Nethermind/Erigon/Besu administration and debugging, signing with node-held keys,
  // the engine API, heavy tracing, the dev nodes' state setters (hardhat, anvil, ganache), and
  // testing_ (execution-apis src/testing: testing_buildBlockV1 builds a block of any transactions).
  evm: ["admin_", "debug_", "personal_", "miner_", "txpool_", "engine_", "clique_", "les_", "parity_", "trace_", "hardhat_", "evm_", "anvil_", "ganache_", "testing_"],
  // starknet-devnet (devnet_mint, devnet_setTime...), Katana's dev_ setters; Juno and Pathfinder
  // expose no admin namespace over JSON-RPC.
  starknet: ["devnet_", "dev_", "katana_"],
  // Tendermint/CometBFT's unsafe RPC (unsafe_flush_mempool, dial_seeds, dial_peers).
  cosmos: ["unsafe_", "dial_seeds", "dial_peers"],
};

export interface MethodPolicy {
  readonly deny: readonly string[];
  readonly allow: readonly string[];
}

export function methodPolicy(c: GatewayChain): MethodPolicy {
  const lower = (xs: readonly string[] = []) => xs.map((m) => m.toLowerCase());
  return { deny: [...lower(DEFAULT_DENY[c.kind]), ...lower(c.denyMethods)], allow: lower(c.allowMethods) };
}

const split = (xs: readonly string[]) => ({ families: xs.filter((m) => m.endsWith("_")), names: xs.filter((m) => !m.endsWith("_")) });

/**
 * "`fetch` is in this list": ACL words, or never when the list is empty. `prefixes` are what may
 * come before a method name in the fetched text (a Tendermint URI call's path: see URI_PREFIXES).
 */
function matches(list: readonly string[], fetch = "var(txn.rpc_method)", prefixes: readonly string[] = [""]): Cond[] {
  const { families, names } = split(list);
  const words = (xs: string[]) => prefixes.flatMap((p) => xs.map((x) => p + x));
  return [
    ...(families.length ? [anon(fetch, "-i", "-m", "beg", ...words(families))] : []),
    ...(names.length ? [anon(fetch, "-i", "-m", "str", ...words(names))] : []),
  ];
}

/** Denied unless an allow entry matches: one term per deny matcher, each allowed alternative negated in it. */
const deniedTerms = (p: MethodPolicy, fetch?: string, prefixes?: readonly string[]): Cond[] => {
  const allowed = matches(p.allow, fetch, prefixes);
  return matches(p.deny, fetch, prefixes).map((d) => [...d, ...allowed.flatMap((a) => ["!", ...a])]);
};

/**
 * CometBFT serves each method as a URI call at /<method> and, from v1.0, at /v1/<method>
 * (rpc/jsonrpc/server/rpc_func.go, RegisterRPCFuncs).
 */
const URI_PREFIXES = ["/", "/v1/"];

/** A single JSON-RPC object whose one "method" key json_query reads as Go and JS servers do. */
const SIMPLE_BODY = String.raw`(?i)^\s*\{(?![\s\S]*\\)(?![\s\S]*"method"[\s\S]*"method")`;

/**
 * What the policy checks: a JSON-RPC POST to a gateway chain, and any request with a body on a
 * chain's rpc-http paths or a Tendermint RPC hostname. CometBFT runs a JSON-RPC body sent to / or
 * /v1 whatever the HTTP method (rpc/jsonrpc/server/http_json_handler.go reads it for GET too).
 */
const RPC_HTTP = [...anon("var(txn.iface)", "-m", "str", "rpc-http"), "known_chain"];
const HAS_BODY = anon("req.body_len", "gt", "0");
const RPC_POST = [...RPC_HTTP, "METH_POST", ...exactPath];
export const isRpc = (c?: GatewayChain): Cond => (c ? anon("var(txn.rpc)", "-m", "str", c.path) : anon("var(txn.rpc)", "-m", "found"));
/** A single call whose method json_query read (the raw name: lists match ignoring case). */
export const simple = anon("var(txn.rpc_method)", "-m", "found");

/**
 * Rules run for JSON-RPC POSTs once the body is in: they refuse denied methods, over-long
 * batches and unparsable bodies. Chain-independent steps run once; only the lists are per chain.
 */
export function policyRules(chains: readonly GatewayChain[], maxBatch: number): Rule[] {
  const rpcChains = chains.filter((c) => c.upstreams.rpcHttp);
  const rules: Rule[] = [
    req(["set-var(txn.rpc)", "var(txn.chain)"], [...RPC_POST, "or", ...RPC_HTTP, ...HAS_BODY], "Method policy: JSON-RPC POSTs, and bodies sent with any other method."),
    // A Tendermint RPC hostname takes JSON-RPC too: the same policy, as its chain's.
    ...chains.flatMap((c) => {
      const host = c.hostnames?.tendermintRpc && c.upstreams.rpcHttp ? hostIs(c.hostnames.tendermintRpc) : undefined;
      return host ? [req(["set-var(txn.rpc)", `str(${c.path})`], [...host, "METH_POST", "or", ...host, ...HAS_BODY])] : [];
    }),
    req(["set-var(txn.rpc_method)", "req.body,json_query('$.method')"], [...isRpc(), ...anon("req.body", "-m", "reg", SIMPLE_BODY)], "Single calls: json_query reads the method natively."),
  ];
  for (const c of rpcChains) {
    rules.push(req(["lua.rpc_policy", c.path, String(maxBatch)], [...isRpc(c), "!", ...simple], `${c.chainId}: batches and unusual bodies, parsed whole in Lua`));
    for (const d of deniedTerms(methodPolicy(c))) rules.push(req(["set-var(txn.rpc_verdict)", "str(denied)"], [...isRpc(c), ...simple, ...d]));
  }
  const verdict = (v: string) => anon("var(txn.rpc_verdict)", "-m", "str", v);
  rules.push(
    refuse(413, `batch longer than ${maxBatch} calls`, verdict("batch")),
    refuse(400, "Parse error: the body is not JSON", verdict("parse"), undefined, PARSE_ERROR),
    refuse(400, "Invalid Request: the body is no JSON-RPC call or batch the gateway can check", verdict("invalid"), undefined, INVALID_REQUEST),
    // A refused call is answered with its own id and method (batch.ts); a batch, after the rate checks.
    ...refusalRules(),
  );
  for (const c of rpcChains.filter((x) => x.kind === "cosmos")) {
    // The same lists for Tendermint URI calls (GET /unsafe_flush_mempool, /dial_peers?...): the
    // method is the path, so an allowed name opens its URI call too.
    const p = methodPolicy(c);
    // A method's name never holds a slash: an encoded one (/v1%2Fdial_peers) is a way round the
    // lists for a server that decodes it before routing (CometBFT on Go's older ServeMux does).
    rules.push(refuse(400, "encoded slash in a Tendermint URI call", [...on(c, "rpc-http"), ...anon("var(txn.rest)", "-i", "-m", "sub", "%2f", "%5c")]));
    if (c.hostnames?.tendermintRpc) rules.push(refuse(400, "encoded slash in a Tendermint URI call", [...hostIs(c.hostnames.tendermintRpc), ...anon("path", "-i", "-m", "sub", "%2f", "%5c")]));
    for (const d of deniedTerms(p, "var(txn.rest)", URI_PREFIXES)) rules.push(refuse(403, "method not served by this gateway", [...on(c, "rpc-http"), ...d]));
    if (c.hostnames?.tendermintRpc) for (const d of deniedTerms(p, "path", URI_PREFIXES)) rules.push(refuse(403, "method not served by this gateway", [...hostIs(c.hostnames.tendermintRpc), ...d]));
  }
  return rules;
}

/**
 * What policy.lua reads from the stack's data (gateway_data.lua): each chain's lists (lower case;
 * "x_" is a family), and for a chain with several nodes the set of its reads (methods.ts), which
 * alone may be sent to a second node (failover.ts).
 */
export const policyData = (chains: readonly GatewayChain[]): Record<string, MethodPolicy & { reads?: Record<string, true> }> =>
  Object.fromEntries(chains.map((c) => [c.path, { ...methodPolicy(c), ...(hasNodes(c) ? { reads: readSet(c.kind) } : {}) }]));

/**
 * What ws_limit (gateway/lua/limits.lua) reads from the stack's data: per chain, the same lists
 * as HTTP calls, the batch limit, which calls open a subscription and which create a filter
 * (gateway/methods.ts).
 */
export const wsPolicyData = (chains: readonly GatewayChain[], maxBatch: number) =>
  Object.fromEntries(chains.map((c) => [c.path, { ...methodPolicy(c), subscribe: SUBSCRIPTION, filter: FILTER_CREATOR[c.kind], max_batch: maxBatch }]));
