/**
 * The gateway's own JSON-RPC 2.0 answers to refused calls (gateway/lua/refusals.lua). Pure.
 *
 * A single refused call gets 403 and an error carrying its id and method as sent (policy.ts
 * decides; refusalRules answer). A batch holding refused calls is answered as one array by the
 * Lua service rpc_batch: each refused call's error in its place (notifications get none), and the
 * other calls relayed to the chain's node as a smaller batch, their answers joined in by id.
 * The smaller batch enters HAProxy again by an internal listener (batchAddress) that hands it to
 * the backend relaying the chain's JSON-RPC: where a chain has several nodes, the send backend,
 * so a split batch is never sent to a second node. The service runs after the rate and badge
 * allowance checks, which counted each call of the batch once; the listener counts nothing more.
 */
import { statusErrors } from "./errors.js";
import { hasNodes } from "./failover.js";
import { internalGate } from "./internal.js";
import { LUA_ENTRIES, luaLoad } from "./lua.js";
import { anon, req, useBackend, type Directive, type Rule, type Section } from "./model.js";
import { SPEC_PATH, rpcBackend } from "./routes.js";
import { backendName } from "./upstreams.js";
import type { GatewayChain, GatewayOptions } from "./types.js";

/** Where a split batch's relayed calls enter HAProxy: an abstract socket per gateway (Linux). */
export const batchAddress = (o: GatewayOptions) => `abns@rpcstack-batch-${o.httpsPort}`;
/** What the httpclient asks for (a chain's path after it): never sent to a node. */
export const BATCH_URL = "http://rpcstack-batch/";
/** As long as a relayed call may take (the defaults' `timeout server`). */
export const BATCH_TIMEOUT_MS = 60_000;

const rpcChains = (chains: readonly GatewayChain[]) => chains.filter((c) => c.upstreams.rpcHttp);
const splitBackend = (c: GatewayChain) => (hasNodes(c) ? backendName(c.path, "send") : rpcBackend(c));
const verdict = (v: string) => anon("var(txn.rpc_verdict)", "-m", "str", v);

/** What refusals.lua reads from the stack's data (gateway_data.lua). */
export const batchData = (o: GatewayOptions) => ({
  url: BATCH_URL,
  // A versioned path's node path (specVersions.ts), sent after the chain's: the relayed calls reach the version asked for.
  spec_var: SPEC_PATH,
  dst: batchAddress(o),
  timeout: BATCH_TIMEOUT_MS,
  errors: statusErrors(),
  internal: JSON.stringify({ jsonrpc: "2.0", id: null, error: statusErrors()["500"] }),
});

/** Global lines: the Lua program, wherever a chain takes JSON-RPC over HTTP. */
export const batchGlobal = (chains: readonly GatewayChain[], o: GatewayOptions): Directive[] =>
  rpcChains(chains).length ? [luaLoad(o, LUA_ENTRIES.refusals)] : [];

/**
 * Policy rules: a single refused call is answered 403 with its own id and method. 403 stays, as
 * before and as proxyd answers: the call reached no node, and a client or a log that reads only
 * the status sees a refusal rather than a node's error.
 */
export const refusalRules = (): Rule[] => [
  req(["lua.rpc_refusal"], verdict("denied")),
  // A notification (no id) gets no JSON-RPC answer (JSON-RPC 2.0, 4.1): the 403 alone, with no body.
  { phase: "http-request", action: ["return", "status", "403"], cond: [...verdict("denied"), ...anon("var(txn.rpc_refusal)", "-m", "len", "0")] },
  { phase: "http-request", action: ["return", "status", "403", "content-type", "application/json", "lf-string", "%[var(txn.rpc_refusal)]"], cond: verdict("denied") },
];

/** Frontend rules, after the rate and allowance checks: the service answers split batches. */
export const batchRules = (chains: readonly GatewayChain[]): Rule[] =>
  rpcChains(chains).length ? [req(["use-service", "lua.rpc_batch"], verdict("split"), "A batch holding refused calls: answered as one array, its allowed calls relayed (batch.ts).")] : [];

/** The listener a split batch's relayed calls come in by. */
export function batchSections(chains: readonly GatewayChain[], o: GatewayOptions): Section[] {
  const rpc = rpcChains(chains);
  if (!rpc.length) return [];
  return [
    {
      header: ["frontend", "batch_relay"],
      comment: "The allowed calls of batches holding refused ones, each chain's to the backend that relays its JSON-RPC.",
      // The client's request is logged by the https frontend already.
      directives: [["bind", batchAddress(o)], ["no", "log"]],
      rules: [
        ...internalGate(),
        // `/<chain>/<node path>`: a version other than the pinned one, as the client's request asked (specVersions.ts).
        ...rpc.filter((c) => c.specVersions).map((c) => req([`set-var(${SPEC_PATH})`, `path,regsub(^/${c.path},)`], anon("path", "-m", "beg", `/${c.path}/`))),
        ...rpc.map((c) => useBackend(splitBackend(c), [...anon("path", `/${c.path}`), "or", ...anon("path", "-m", "beg", `/${c.path}/`)])),
        { phase: "default_backend", action: ["be_unrouted"] },
      ],
    },
  ];
}
