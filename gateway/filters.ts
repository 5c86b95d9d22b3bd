/**
 * Filters a key may create on the nodes. A filter (eth_newFilter, eth_newBlockFilter,
 * eth_newPendingTransactionFilter) lives on the node until it goes unpolled for 5 minutes, and
 * gathers what it matches meanwhile (a pending-transaction filter every new transaction hash), so
 * an unbounded key could fill a node's memory with them. Each key (each address on a public
 * hostname) may create at most `filtersPerKey` in any FILTER_WINDOW_S, over HTTP (single calls
 * and every call of a batch) and over WebSockets together; so a key whose filters all go idle
 * holds at most that many on the nodes at once. One that polls its filters keeps them, and pays
 * each poll from its call rate.
 *
 * Past the bound an HTTP request is refused whole (429, a JSON-RPC error), and a WebSocket call
 * becomes a call of a method no node serves, under its own id (ws.lua), like a subscription past
 * its cap. The count is kept in the Lua state every thread shares (rpcstack/filter_budget.lua);
 * a reload starts it afresh. Pure.
 */
import { refuse } from "./errors.js";
import { LUA_ENTRIES, luaLoad } from "./lua.js";
import { FILTER_CREATOR, FILTER_WINDOW_S } from "./methods.js";
import { anon, req, type Directive, type Rule } from "./model.js";
import { isRpc, simple } from "./policy.js";
import type { GatewayChain, GatewayOptions } from "./types.js";

const filtering = (chains: readonly GatewayChain[]) => chains.filter((c) => c.upstreams.rpcHttp && FILTER_CREATOR[c.kind]);

export const FILTERS_REFUSED = (o: GatewayOptions) => `too many filters created with this project key (at most ${o.filtersPerKey} in ${FILTER_WINDOW_S / 60} minutes)`;

/**
 * Frontend rules, after the method policy: a single call json_query read whose method creates a
 * filter, and a batch or unusual body that may hold one (it names "filter" or holds an escape),
 * go to the Lua action, which counts its filter creations against the key.
 */
export function filterRules(chains: readonly GatewayChain[], o: GatewayOptions): Rule[] {
  const on = filtering(chains);
  if (!on.length) return [];
  const rules = on.map((c, i) =>
    req(
      ["lua.rpc_filters", c.path],
      [...isRpc(c), ...simple, ...anon("var(txn.rpc_method)", "-i", "-m", "reg", FILTER_CREATOR[c.kind]!),
        "or", ...isRpc(c), "!", ...simple, ...anon("req.body", "-i", "-m", "sub", "filter", "\\")],
      i ? undefined : `Filters: at most ${o.filtersPerKey} created per key in ${FILTER_WINDOW_S} s (gateway/filters.ts).`,
    ),
  );
  return [...rules, refuse(429, FILTERS_REFUSED(o), anon("var(txn.rpc_verdict)", "-m", "str", "filters"))];
}

/** What the Lua programs read (gateway_data.lua): the bound, its window, and which chains' calls create filters. */
export const filterData = (chains: readonly GatewayChain[], o: GatewayOptions) => ({
  max: o.filtersPerKey,
  window: FILTER_WINDOW_S,
  chains: Object.fromEntries(filtering(chains).map((c) => [c.path, FILTER_CREATOR[c.kind]!])),
});

/** Global lines: the action's program, when some chain has filters. */
export const filterGlobal = (chains: readonly GatewayChain[], o: GatewayOptions): Directive[] => (filtering(chains).length ? [luaLoad(o, LUA_ENTRIES.filters)] : []);
