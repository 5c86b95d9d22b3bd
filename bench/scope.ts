/**
 * Edits of the generated config's public frontend that bound what evaluating fewer rules could
 * save (issue 52, item 4), for the instruction counts of bench/instructions.ts. Pure text edits;
 * neither config is one to serve: each is right only for the one call the bench sends.
 * - `scopeToRoute`: the rules after the key's rate tracking (what a backend per route would hold)
 *   settled for one route's calls (gateway/simplify.ts settleKnown): the rules that cannot apply
 *   to them go, and the terms every one of them satisfies go from the rules that stay. The checks
 *   before it (bounds, normalisation, key) and the after-response rules stay as they are.
 * - `bareRelay`: no frontend rule at all, the route's backend for every request: HAProxy's own
 *   cost of a relay, with no check.
 */
import type { Phase, Rule } from "../gateway/model.js";
import { settleKnown } from "../gateway/simplify.js";

/** The rule the route part starts after: the key's rate tracking, the first rule past the 401. */
const ROUTE_PART_AFTER = /^ {4}http-request track-sc0 var\(txn\.keyname\) /;
const RULE = /^ {4}(tcp-request connection|http-request|http-response|http-after-response|use_backend|default_backend) /;

/** Words as HAProxy splits them: on blanks outside quotes (the quotes kept, as the serializer wrote them). */
export function words(text: string): string[] {
  return text.match(/(?:'[^']*'|"(?:\\.|[^"\\])*"|[^\s'"])+/g) ?? [];
}

/** A rule line as a rule: its phase, its action's text and its condition's words. */
function parseRule(line: string): Rule & { readonly text: string } {
  const phase = RULE.exec(line)![1] as Phase;
  const rest = line.slice(4 + phase.length + 1);
  const w = words(rest);
  const at = w.indexOf("if");
  return { phase, action: at < 0 ? w : w.slice(0, at), cond: at < 0 ? undefined : w.slice(at + 1), text: line };
}

const ruleLine = (r: Rule) => `    ${[r.phase, ...r.action, ...(r.cond?.length ? ["if", ...r.cond] : [])].join(" ")}`;

/** The lines of the `frontend https` section: [first, end) of `lines`. */
function frontend(lines: readonly string[]): [number, number] {
  const first = lines.indexOf("frontend https");
  if (first < 0) throw new Error("the generated config has no frontend https");
  let end = first + 1;
  while (end < lines.length && lines[end] !== "") end++;
  return [first, end];
}

/**
 * What every call of one route satisfies from the route part on. Facts about variables set before
 * it (chain, interface, rest of the path, the key's name, the WebSocket mark), or never set for
 * such a call (no quota).
 */
export interface RouteFacts {
  readonly chain: string;
  readonly iface: "rpc-http" | "rest" | "rpc";
  /** The route's method ACL, e.g. METH_POST. */
  readonly method: string;
  /** The key has no quota (the quota rules are another route's). */
  readonly noQuota: boolean;
}

export function routeKnown(f: RouteFacts, chains: readonly string[]): Map<string, boolean> {
  const known = new Map<string, boolean>([
    ["gateway_path", true],
    ["public_host", false],
    ["known_chain", true],
    ["known_iface", true],
    [f.method, true],
    ["{ var(txn.keyname) -m found }", true],
  ]);
  // The JSON-RPC routes take the exact path; only a WebSocket route's calls may be upgrades (or be refused for not being one).
  if (f.iface !== "rest") known.set("{ var(txn.rest) -m len 0 }", true);
  if (f.iface !== "rpc") known.set("{ var(txn.ws) -m bool }", false);
  for (const c of chains) known.set(`{ var(txn.chain) -m str ${c} }`, c === f.chain);
  // txn.rpc is set in the route part, to the call's chain: before and after, never another chain.
  for (const c of chains) if (c !== f.chain) known.set(`{ var(txn.rpc) -m str ${c} }`, false);
  for (const i of ["rpc-http", "rest", "rpc"]) known.set(`{ var(txn.iface) -m str ${i} }`, i === f.iface);
  if (f.noQuota) for (const v of ["quota", "quota_entry"]) known.set(`{ var(txn.${v}) -m found }`, false);
  return known;
}

/** The config with its route part settled by `known` (see the top of this file), and how many rules that took out. */
export function scopeToRoute(config: string, known: ReadonlyMap<string, boolean>): { config: string; removed: number } {
  const lines = config.split("\n");
  const [first, end] = frontend(lines);
  const from = lines.findIndex((l, i) => i > first && i < end && ROUTE_PART_AFTER.test(l));
  if (from < 0) throw new Error("the generated frontend no longer tracks the key's rate with track-sc0: the route part has no start");
  const out: string[] = [];
  let removed = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (i <= from || i >= end || !/^ {4}http-request /.test(l)) {
      out.push(l);
      continue;
    }
    const r = parseRule(l);
    const [settled] = settleKnown([r], known);
    if (!settled) removed++;
    else out.push(settled === r ? l : ruleLine(settled));
  }
  return { config: out.join("\n"), removed };
}

/** The config with no frontend rule, every request sent to `backend`. */
export function bareRelay(config: string, backend: string): string {
  const lines = config.split("\n");
  const [first, end] = frontend(lines);
  if (!lines.some((l, i) => i > first && i < end && l.startsWith(`    use_backend ${backend} `))) throw new Error(`the generated frontend does not route to ${backend}`);
  const kept = lines.filter((l, i) => i <= first || i >= end || !RULE.test(l));
  kept.splice(end - (lines.length - kept.length), 0, `    default_backend ${backend}`);
  return kept.join("\n");
}
