/**
 * Quotas across HAProxy restarts (gateway/quotas.ts): a new HAProxy process counts every quota
 * from 0, so when the keeper first reads a new process it hands it what each key name spent
 * earlier in the UTC day and month, as the ledger has it, in the map quota_used.map
 * (`<name>/<period> <calls>`) that the quota rules add to their own count. What the old process
 * counted after the keeper's last reading of it is not in the ledger, so not in the seed either.
 */
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { utcDay, type LedgerState } from "./ledger.js";

/** The map's lines: calls per `<name>/<YYYY-MM-DD>` for `at`'s day and `<name>/<YYYY-MM>` for its month. Pure. */
export function quotaSeeds(state: LedgerState, at: Date): string {
  const day = utcDay(at);
  const month = day.slice(0, 7);
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
  return [...out].filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}\n`).join("");
}

/** Replaces the running map with `lines` in one commit (a seed sent twice leaves one entry per period). */
export async function sendSeeds(admin: string, mapPath: string, lines: string): Promise<void> {
  const prepared = await runtimeCommand(admin, `prepare map ${mapPath}`, 5_000);
  const version = /New version created: (\d+)/.exec(prepared)?.[1];
  if (!version) throw new Error(`HAProxy did not open a new version of ${mapPath}: ${prepared.trim()}`);
  const added = lines ? await runtimeCommand(admin, `add map @${version} ${mapPath} <<\n${lines}`, 5_000) : "";
  const committed = await runtimeCommand(admin, `commit map @${version} ${mapPath}`, 5_000);
  if ((added + committed).trim()) throw new Error(`HAProxy refused the quota seed: ${(added + committed).trim()}`);
}
