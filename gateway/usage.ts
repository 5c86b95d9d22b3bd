/**
 * Usage per key (issue 33): a stick table the usage keeper (usage/) reads through the runtime API.
 * One entry per key name, chain and interface (`<name>/<chain>/<interface>`, never the key), its
 * counters cumulative since HAProxy started; the keeper turns them into daily counts on a volume.
 */
import { afterResponse, anon, req, type Cond, type Rule, type Section } from "./model.js";
import { USAGE_GPC, USAGE_INTERFACES, USAGE_STORE, USAGE_TABLE, entryId } from "./usageContract.js";

/** The stick counter that tracks the usage entry for the life of a request or WebSocket. */
export const USAGE_SC = 4;

/**
 * An idle entry lasts a day: the keeper reads every few seconds, so nothing counted is gone
 * before it is read, and an entry that comes back starts at 0, which the keeper reads as new.
 */
export const usageTable = (): Section => ({
  header: ["backend", USAGE_TABLE],
  directives: [["stick-table", "type", "string", "len", "160", "size", "100k", "expire", "1d", "store", USAGE_STORE]],
});

/** Before anything can refuse a keyed request for its rate: a 429 is counted too. */
export const usageTracking = (keyed: Cond): Rule[] => [
  ...Object.entries(USAGE_INTERFACES).map(([path, iface]) =>
    req(["set-var-fmt(txn.usage)", entryId({ key: "%[var(txn.keyname)]", chain: "%[var(txn.chain)]", iface })], [...keyed, ...anon("var(txn.iface)", "-m", "str", path)]),
  ),
  req([`track-sc${USAGE_SC}`, "var(txn.usage)", "table", USAGE_TABLE], anon("var(txn.usage)", "-m", "found")),
];

/**
 * A request's calls once the rates have let it through, in txn.req_calls for usage, quotas and a
 * badge's allowance alike: the calls that go on to a node. A batch holding refused calls counts
 * those the policy relays (txn.rpc_relayed, possibly none), another batch its calls (txn.rpc_calls,
 * set by the policy for two or more), else one. A WebSocket's calls are its messages'
 * (ws_limit), so `notWs` leaves its handshake out.
 */
export const requestCalls = (notWs: Cond, nodeDown: Cond): Rule[] => {
  const split = anon("var(txn.rpc_relayed)", "-m", "found");
  // A node out with a status URL (`nodeDown`): its down backend answers (routes.ts gate), no call goes on.
  const on: Cond = [...notWs, "!", ...nodeDown];
  return [
    req(["set-var(txn.req_calls)", "int(0)"], [...notWs, ...nodeDown]),
    req(["set-var(txn.req_calls)", "var(txn.rpc_relayed)"], [...on, ...split]),
    req(["set-var(txn.req_calls)", "var(txn.rpc_calls)"], [...on, "!", ...split, ...anon("var(txn.rpc_calls)", "-m", "found")]),
    req(["set-var(txn.req_calls)", "int(1)"], [...on, "!", ...split, "!", ...anon("var(txn.rpc_calls)", "-m", "found")]),
  ];
};

/** Set by be_unrouted: no route took the request (build.ts). */
export const UNROUTED_VAR = "txn.unrouted";

/**
 * HAProxy's own answer to a request it could not hand to a node (the connection refused or timed
 * out, the queue timed out: the termination state's second letter C or Q). A node's own error
 * answer reached the node, and counts.
 */
export const NEVER_SENT: Cond = anon("txn.sess_term_state", "-m", "reg", "^[sS][CQ]$");

/**
 * The calls of a request (requestCalls) added to its usage entry once it is answered, and only when
 * they went on to a node (or the cache answered them): not for the quota's or a badge's refusal, a
 * request no route took, or one HAProxy could not hand to a node. Counted at the answer, never
 * taken back: the usage keeper reads a counter that went down as a new entry. The calls of a batch
 * the gateway answered itself go to its errors at once: a refused call is an error wherever it is,
 * alone (its 403, in usageAnswers) or in a batch.
 */
export const usageCalls = (badges: boolean): Rule[] => {
  const tracked = anon("var(txn.usage)", "-m", "found");
  const not = (v: string, ...m: string[]) => ["!", ...anon(`var(${v})`, "-m", ...(m.length ? m : ["found"]))];
  return [
    req([`sc-add-gpc(${USAGE_GPC.errors},${USAGE_SC})`, "var(txn.rpc_refused)"], [...tracked, ...anon("var(txn.rpc_refused)", "-m", "found")]),
    afterResponse([`sc-add-gpc(${USAGE_GPC.calls},${USAGE_SC})`, "var(txn.req_calls)"], [
      ...tracked, ...anon("var(txn.req_calls)", "-m", "found"), ...not("txn.quota_over", "bool"), ...(badges ? not("txn.badge_verdict") : []), ...not(UNROUTED_VAR, "bool"), "!", ...NEVER_SENT,
    ]),
  ];
};

/** Every answer, the gateway's own refusals included (http-after-response sees them all). */
export const usageAnswers = (): Rule[] => {
  const tracked: Cond = anon("var(txn.usage)", "-m", "found");
  return [
    afterResponse([`sc-inc-gpc(${USAGE_GPC.limited},${USAGE_SC})`], [...tracked, ...anon("status", "eq", "429")]),
    afterResponse([`sc-inc-gpc(${USAGE_GPC.errors},${USAGE_SC})`], [...tracked, ...anon("status", "ge", "400"), "!", ...anon("status", "eq", "429")]),
    // Answers the cache gave without the node (gateway/lua/cache.lua): a hit, or a wait on an
    // identical miss in flight. One per answer: a batch answered whole from the cache counts one.
    afterResponse([`sc-inc-gpc(${USAGE_GPC.cacheHits},${USAGE_SC})`], [...tracked, ...anon("res.hdr(x-cache)", "-m", "str", "HIT", "COALESCED")]),
  ];
};
