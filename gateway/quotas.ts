/**
 * Quotas (issue 33): calls per UTC day or month for a key name (a project key's, or a badge
 * project's), enforced by HAProxy itself. The limits are in a map file (`<name> <calls> <per>`)
 * that the key sync ships and changes through the runtime API, so haproxy.cfg never depends on
 * them; the calls spent are gpc 0 of the entry `<name>/<period>` in st_quota, tracked by sc5.
 * A request's calls are added before it is let through and taken back if they went past the
 * limit: concurrent requests can only be refused early, never let past it, within one process.
 */
import { JSON_TYPE, errorBody } from "./errors.js";
import { afterResponse, anon, req, type Cond, type Rule, type Section } from "./model.js";
import type { GatewayOptions, Quota } from "./types.js";

export const QUOTA_SC = 5;
export const QUOTA_TABLE = "st_quota";
export const QUOTA_MAP_FILE = "quotas.map";
/**
 * What each `<name>/<period>` spent before this HAProxy process started, as the usage keeper's
 * ledger has it (usage/quotaSeed.ts): empty at start, filled by the keeper through the runtime API.
 */
export const QUOTA_USED_FILE = "quota_used.map";
/** JSON-RPC's "limit exceeded" (EIP-1474), as hosted providers answer a spent quota. */
export const QUOTA_ERROR_CODE = -32005;

export const quotaMapPath = (o: GatewayOptions) => o.quotaMapFile ?? `${o.filesDir}/${QUOTA_MAP_FILE}`;

/** The map HAProxy reads: one `<name> <calls> <per>` line per quota. */
export const quotaMap = (quotas: readonly Quota[]) =>
  // A comment first: the file is never empty (the docker provider refuses an upload without content).
  `# <name> <calls> <day|month>\n${quotas.map((q) => `${q.name} ${q.calls} ${q.per}\n`).join("")}`;

/**
 * HAProxy's longest expiry (timers are at most 2^31 ms, ~24.8 days): each call renews it, so only
 * a monthly quota left unused for 24 days within one month loses what it spent before. A name is
 * at most 70 characters (`badge:` and a 64-character project id), `/` and a period 10: HAProxy
 * cuts longer keys, which would merge the days of a month.
 */
export const quotaTable = (): Section => ({
  header: ["backend", QUOTA_TABLE],
  directives: [["stick-table", "type", "string", "len", "88", "size", "100k", "expire", "24d", "store", "gpc(1)"]],
});

/** Calls spent in the period: this process's count and what the keeper says came before it. */
const USED = `sc_get_gpc(0,${QUOTA_SC}),add(txn.quota_before)`;
const has = (v: string): Cond => anon(`var(${v})`, "-m", "found");
const quoted: Cond = has("txn.quota");
const per = (p: Quota["per"]): Cond => [...quoted, ...anon("var(txn.quota_per)", "-m", "str", p)];
/** Calls left, never below 0 (a quota lowered live can be under what was spent). */
const left: Rule[] = [
  req(["set-var(txn.quota_left)", `var(txn.quota_limit),sub(txn.quota_used)`], quoted),
  req(["set-var(txn.quota_left)", "int(0)"], [...quoted, ...anon("var(txn.quota_left)", "-m", "int", "lt", "0")]),
];

/**
 * Once the key name is known, before anything can refuse the request: the quota, its period and
 * what is left, so that every answer to a key with a quota carries the headers.
 */
export function quotaTracking(o: GatewayOptions, keyed: Cond): Rule[] {
  return [
    req(["set-var(txn.quota)", `var(txn.keyname),map(${quotaMapPath(o)})`], keyed, "Quotas: calls per UTC day or month, by key name."),
    req(["set-var(txn.quota_limit)", "var(txn.quota),field(1, )"], quoted),
    req(["set-var(txn.quota_per)", "var(txn.quota),field(2, )"], quoted),
    // One reading of the clock: the period and its end agree even at midnight.
    req(["set-var(txn.quota_now)", "date"], quoted),
    req(["set-var(txn.quota_period)", "var(txn.quota_now),utime(%Y-%m-%d)"], per("day")),
    req(["set-var(txn.quota_reset)", "var(txn.quota_now),div(86400),add(1),mul(86400)"], per("day")),
    req(["set-var(txn.quota_period)", "var(txn.quota_now),utime(%Y-%m)"], per("month")),
    req(["set-var(txn.quota_reset)", "var(txn.quota_now),lua.quota_month_end"], per("month")),
    req(["set-var(txn.quota_reset_in)", "var(txn.quota_reset),sub(txn.quota_now)"], quoted),
    req(["set-var-fmt(txn.quota_entry)", "%[var(txn.keyname)]/%[var(txn.quota_period)]"], quoted),
    req([`track-sc${QUOTA_SC}`, "var(txn.quota_entry)", "table", QUOTA_TABLE], has("txn.quota_entry")),
    req(["set-var(txn.quota_before)", `var(txn.quota_entry),map_str_int(${o.filesDir}/${QUOTA_USED_FILE},0)`], quoted),
    req(["set-var(txn.quota_used)", USED], quoted),
    ...left,
  ];
}

/** The 429 of a spent quota: what it is, when it resets, and Retry-After. */
const quotaRefusal = (cond: Cond): Rule => ({
  phase: "http-request",
  action: [
    "return", "status", "429", "content-type", JSON_TYPE, "hdr", "Retry-After", "%[var(txn.quota_reset_in)]",
    "lf-string", errorBody(QUOTA_ERROR_CODE, "quota exceeded: %[var(txn.quota_limit)] calls per %[var(txn.quota_per)] for this project key; it resets at %[var(txn.quota_reset_at)]"),
  ],
  cond,
});

/**
 * Where usage counts a request's calls (txn.req_calls, usage.ts requestCalls: a batch's, else one)
 * are added, and taken back with a 429 when they went past the quota. A WebSocket handshake adds
 * none (its messages count in ws_limit) and is refused once nothing is left.
 */
export function quotaCalls(notWs: Cond, ws: Cond): Rule[] {
  const http: Cond = [...quoted, ...notWs];
  const over: Cond = anon("var(txn.quota_over)", "-m", "bool");
  return [
    req([`sc-add-gpc(0,${QUOTA_SC})`, "var(txn.req_calls)"], http),
    req(["set-var(txn.quota_used)", USED], http),
    req(["set-var(txn.quota_over)", "bool(true)"], [...http, ...anon("var(txn.quota_limit),sub(txn.quota_used)", "lt", "0")]),
    req(["set-var(txn.quota_over)", "bool(true)"], [...quoted, ...ws, ...anon("var(txn.quota_limit),sub(txn.quota_used)", "le", "0")]),
    // gpc is unsigned: adding the negated calls takes them back exactly.
    req([`sc-add-gpc(0,${QUOTA_SC})`, "var(txn.req_calls),neg"], [...http, ...over]),
    req(["set-var(txn.quota_used)", USED], [...http, ...over]),
    ...left,
    req(["set-var(txn.quota_reset_at)", 'var(txn.quota_reset),utime("%Y-%m-%dT%H:%M:%SZ")'], [...quoted, ...over]),
    quotaRefusal([...quoted, ...over]),
  ];
}

const takeBack = (phase: typeof req | typeof afterResponse, cond: Cond = []): Rule[] => [
  phase([`sc-add-gpc(0,${QUOTA_SC})`, "var(txn.req_calls),neg"], [...quoted, ...anon("var(txn.req_calls)", "-m", "found"), "!", ...anon("var(txn.quota_over)", "-m", "bool"), ...cond]),
];
/** A request no route took (be_unrouted), or `cond` (a badge's allowance refused it): the calls quotaCalls added are taken back. */
export const quotaTakeBack = (cond: Cond = []): Rule[] => takeBack(req, cond);
/** A request HAProxy could not hand to a node (usage.ts NEVER_SENT): its calls are taken back. */
export const quotaNeverSent = (neverSent: Cond): Rule[] => takeBack(afterResponse, neverSent);

/**
 * On every answer to a key with a quota: the three fields of the IETF httpapi ratelimit-headers
 * drafts (RateLimit-Limit, -Remaining, and -Reset in seconds to the period's end).
 */
export const quotaHeaders = (): Rule[] => [
  afterResponse(["set-header", "RateLimit-Limit", "%[var(txn.quota_limit)]"], quoted),
  afterResponse(["set-header", "RateLimit-Remaining", "%[var(txn.quota_left)]"], quoted),
  afterResponse(["set-header", "RateLimit-Reset", "%[var(txn.quota_reset_in)]"], quoted),
];
