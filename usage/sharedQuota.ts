/**
 * How replicas' quota counts sit in the shared counter store (usage/counterStore.ts), pure: one
 * hash per period (`rpcstack:quota:<YYYY-MM-DD>`, `rpcstack:quota:<YYYY-MM>`), a field per ledger
 * and key name (`<ledger id> <name>`), its value the calls that ledger counted for the name in the
 * period. Values are totals, not increments: publishing again changes nothing, and a replica that
 * is gone keeps what it spent until the period's hash expires.
 */
import { quotaPeriods } from "./quotaSeed.js";

export const STORE_PREFIX = "rpcstack:quota:";
/** A day's hash outlives the day by two, a month's the month by ten days: counts spent are never dropped while they count. */
export const STORE_TTL_SECONDS = { day: 3 * 86_400, month: 41 * 86_400 } as const;

export const periodHash = (period: string) => `${STORE_PREFIX}${period}`;

/** `at`'s two hashes, each with its time to live. */
export const periodHashes = (at: Date): { key: string; period: string; ttl: number }[] => {
  const [day, month] = quotaPeriods(at);
  return [
    { key: periodHash(day), period: day, ttl: STORE_TTL_SECONDS.day },
    { key: periodHash(month), period: month, ttl: STORE_TTL_SECONDS.month },
  ];
};

/** This ledger's fields in `period`'s hash, from its totals (`<name>/<period>` -> calls). */
export function ownFields(me: string, totals: ReadonlyMap<string, number>, period: string): Record<string, string> {
  const out: Record<string, string> = {};
  const suffix = `/${period}`;
  for (const [entry, n] of totals) if (entry.endsWith(suffix)) out[`${me} ${entry.slice(0, -suffix.length)}`] = String(n);
  return out;
}

/**
 * The other ledgers' calls per `<name>/<period>`, from `period`'s hash; a field that is no
 * `<id> <name> = <count>` is skipped (another program's, or damaged), never read as calls.
 */
export function othersFrom(hash: Readonly<Record<string, string>>, period: string, me: string, into = new Map<string, number>()): Map<string, number> {
  for (const [field, value] of Object.entries(hash)) {
    const m = /^([0-9a-f]{16}) (\S+)$/.exec(field);
    if (!m || m[1] === me || !/^\d{1,15}$/.test(value)) continue;
    const entry = `${m[2]}/${period}`;
    into.set(entry, (into.get(entry) ?? 0) + Number(value));
  }
  return into;
}
