/**
 * Per-key rates across gateway replicas, pure: what a replica's HAProxy counted for each key name in
 * its rate window (`show table st_keys`: requests plus a batch's further calls), and how the
 * replicas' counts sit in the counter store: a hash per replica (`rpcstack:rate:<ledger id>`,
 * `<name> = <calls>`), replaced at each reading and gone a few seconds after its replica, and a
 * sorted set of the replicas that wrote lately (`rpcstack:rate-replicas`, scored by the time).
 */
import { KEY_RATE_TABLE } from "../gateway/usageContract.js";
import { tableEntries } from "./table.js";
export const RATE_PREFIX = "rpcstack:rate:";
export const RATE_REPLICAS = "rpcstack:rate-replicas";
/** A replica that has not written for this long no longer counts: its window's calls are old by then. */
export const RATE_STALE_MS = 5_000;
/** Calls per key name in the window, from `show table st_keys`; lines of other tables and unreadable entries are skipped. */
export function parseRates(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of tableEntries(text, KEY_RATE_TABLE)) {
    const key = f.get("key");
    // The data names carry the window in ms: http_req_rate(10000), gpc0_rate(10000).
    const count = (prefix: string) => [...f].find(([name]) => name.startsWith(prefix))?.[1];
    const [requests, further] = [count("http_req_rate("), count("gpc0_rate(")];
    if (!key || !requests || !further || !/^\d+$/.test(requests) || !/^\d+$/.test(further)) continue;
    const n = Number(requests) + Number(further);
    if (n > 0) out.set(key, n);
  }
  return out;
}

/** The other replicas' calls per key name, summed; values that are not counts are skipped. */
export function sumRates(hashes: readonly Readonly<Record<string, string>>[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const h of hashes) {
    for (const [name, value] of Object.entries(h)) if (/^\d{1,12}$/.test(value)) out.set(name, (out.get(name) ?? 0) + Number(value));
  }
  return out;
}
