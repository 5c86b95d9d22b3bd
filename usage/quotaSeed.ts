/**
 * Quotas across HAProxy restarts and across gateway replicas (gateway/quotas.ts): a new HAProxy
 * process counts every quota from 0, so the keeper hands it, in the map quota_used.map
 * (`<name>/<period> <calls>`) that the quota rules add to their own count, what each key name spent
 * earlier in the UTC day and month: as its own ledger has it when the process is new (the seed),
 * plus, with replicas sharing a counter store (usage/counterStore.ts), what the other replicas'
 * ledgers say they spent. What a process counted after the keeper's last reading of it is not in
 * the ledger, so not in the seed either.
 */
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { utcDay, type LedgerState } from "./ledger.js";

/** The periods a quota can count in at `at`: its UTC day (YYYY-MM-DD) and month (YYYY-MM). */
export const quotaPeriods = (at: Date): [day: string, month: string] => {
  const day = utcDay(at);
  return [day, day.slice(0, 7)];
};

/** Calls per `<name>/<YYYY-MM-DD>` for `at`'s day and `<name>/<YYYY-MM>` for its month, as the ledger has them; names with none are left out. Pure. */
export function quotaTotals(state: LedgerState, at: Date): Map<string, number> {
  const [day, month] = quotaPeriods(at);
  const out = new Map<string, number>();
  const add = (k: string, n: number) => out.set(k, (out.get(k) ?? 0) + n);
  for (const [d, entries] of Object.entries(state.days)) {
    if (d.slice(0, 7) !== month) continue;
    for (const [id, c] of Object.entries(entries)) {
      const name = id.split("/")[0];
      add(`${name}/${month}`, c.calls);
      if (d === day) add(`${name}/${day}`, c.calls);
    }
  }
  for (const [k, n] of out) if (n <= 0) out.delete(k);
  return out;
}

/** The map's lines for these counts, summed where several give one period. Pure. */
export function mapLines(...counts: Iterable<readonly [string, number]>[]): string {
  const sum = new Map<string, number>();
  for (const c of counts) for (const [k, n] of c) sum.set(k, (sum.get(k) ?? 0) + n);
  return [...sum].filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}\n`).join("");
}

/**
 * Lines a runtime command carries at most: HAProxy refuses a command larger than its buffer (16 KiB
 * at the smallest `tune.bufsize` the gateway sets), and a line is at most ~100 bytes.
 */
const LINES_PER_COMMAND = 120;

/** Replaces the running map with `lines` in one commit (a seed sent twice leaves one entry per period), in as many `add map` commands as it takes. */
export async function sendSeeds(admin: string, mapPath: string, lines: string): Promise<void> {
  const prepared = await runtimeCommand(admin, `prepare map ${mapPath}`, 5_000);
  const version = /New version created: (\d+)/.exec(prepared)?.[1];
  if (!version) throw new Error(`HAProxy did not open a new version of ${mapPath}: ${prepared.trim()}`);
  const all = lines.split("\n").filter(Boolean);
  let added = "";
  for (let i = 0; i < all.length; i += LINES_PER_COMMAND) {
    added += await runtimeCommand(admin, `add map @${version} ${mapPath} <<\n${all.slice(i, i + LINES_PER_COMMAND).join("\n")}\n`, 5_000);
  }
  const committed = await runtimeCommand(admin, `commit map @${version} ${mapPath}`, 5_000);
  if ((added + committed).trim()) throw new Error(`HAProxy refused the quota seed: ${(added + committed).trim()}`);
}

/** What a running map holds (`show map`): its keys and whole-number values. */
export async function readMap(admin: string, mapPath: string): Promise<Map<string, number>> {
  const text = await runtimeCommand(admin, `show map ${mapPath}`, 5_000);
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^0x[0-9a-f]+ (\S+) (\d{1,15})$/.exec(line.trim());
    if (m) out.set(m[1], Number(m[2]));
  }
  return out;
}
