/**
 * The usage ledger: what the keeper persists. HAProxy's counters run from 0 since its process (or
 * the entry) began; the ledger turns successive readings into counts per UTC day that survive
 * restarts of HAProxy and of the keeper.
 */
import { COUNTER_NAMES, ZERO, entryId, type Counters, type ProcessIdentity, type Reading } from "./table.js";

export interface LedgerState {
  readonly version: 1;
  /** YYYY-MM-DD (UTC) -> entry id (`<keyname>/<chain>/<interface>`) -> counts of that day. */
  readonly days: Readonly<Record<string, Readonly<Record<string, Counters>>>>;
  /** The last reading absorbed: the process it came from and each entry's raw counters. */
  readonly last?: { readonly process: ProcessIdentity; readonly entries: Readonly<Record<string, Counters>> };
  /**
   * Whose counts these are among the gateway replicas that share a counter store (usage/counterStore.ts):
   * made once with the ledger, so a pod that takes the ledger over publishes under the same name.
   */
  readonly id?: string;
  /** What the last process's quotas were seeded with (`<name>/<period>` -> calls it spent before that process): kept while that process lives. */
  readonly seed?: Readonly<Record<string, number>>;
}

export const EMPTY_LEDGER: LedgerState = { version: 1, days: {} };

export const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export function addCounters(a: Counters, b: Counters): Counters {
  const sum = { ...a };
  for (const n of COUNTER_NAMES) sum[n] = a[n] + b[n];
  return sum;
}

const isZero = (c: Counters) => COUNTER_NAMES.every((n) => c[n] === 0);

/**
 * HAProxy keeps these as 32-bit unsigned integers (gpc and http_req_cnt are STD_T_UINT; bytes_out_cnt
 * is 64-bit): a busy key passes 2^32 calls within one process's life, and the counter goes on from 0.
 */
const WRAP = 2 ** 32;
const WRAPS: ReadonlySet<keyof Counters> = new Set(["calls", "errors", "limited", "cacheHits", "requests"]);

/** Lower than before, from the top half of the range to the bottom one: wrapped, not begun again (2^31 calls between two readings are beyond any gateway). */
const wrapped32 = (prev: number, cur: number) => cur < prev && prev >= WRAP / 2 && cur < WRAP / 2;
const wrapped = (n: keyof Counters, prev: number, cur: number) => WRAPS.has(n) && wrapped32(prev, cur);

/**
 * The same process as before: same Pid and Start_time_sec, and no fewer requests (`CumReq`, also
 * 32 bits) unless that wrapped. A container restarted within the second keeps Pid and start
 * time; its requests begin again from 0.
 */
export function sameProcess(a: ProcessIdentity | undefined, b: ProcessIdentity): boolean {
  return !!a && a.pid === b.pid && a.startTimeSec === b.startTimeSec && (b.cumReq >= a.cumReq || wrapped32(a.cumReq, b.cumReq));
}

/**
 * What happened since the last reading, per entry: current minus last (across a wrap of a 32-bit
 * counter). Where there is no last value to subtract (a new process, an entry not seen before or
 * seen again after it expired, a counter lower than before), everything the entry holds is new.
 */
export function deltas(state: LedgerState, reading: Reading): Map<string, Counters> {
  const before = sameProcess(state.last?.process, reading.process) ? state.last!.entries : {};
  const out = new Map<string, Counters>();
  for (const row of reading.rows) {
    const id = entryId(row);
    const prev = before[id];
    const cur = row.counters;
    const whole = !prev || COUNTER_NAMES.some((n) => cur[n] < prev[n] && !wrapped(n, prev[n], cur[n]));
    const d = { ...ZERO };
    for (const n of COUNTER_NAMES) d[n] = whole ? cur[n] : wrapped(n, prev[n], cur[n]) ? cur[n] + WRAP - prev[n] : cur[n] - prev[n];
    if (!isZero(d)) out.set(id, addCounters(out.get(id) ?? ZERO, d));
  }
  return out;
}

/**
 * The ledger after `reading`, taken at `now`: its deltas are added to now's UTC day, and it
 * becomes the last reading. Absorbing the same reading again adds nothing. Entries missing from
 * the reading have expired in HAProxy, so they are forgotten: if they come back, they start at 0.
 */
export function absorb(state: LedgerState, reading: Reading, now: Date): LedgerState {
  const day = utcDay(now);
  const today: Record<string, Counters> = { ...(state.days[day] ?? {}) };
  for (const [id, d] of deltas(state, reading)) today[id] = addCounters(today[id] ?? ZERO, d);
  const entries: Record<string, Counters> = {};
  for (const row of reading.rows) entries[entryId(row)] = row.counters;
  const days = Object.keys(today).length ? { ...state.days, [day]: today } : state.days;
  const same = sameProcess(state.last?.process, reading.process);
  return { version: 1, days, last: { process: reading.process, entries }, ...(state.id ? { id: state.id } : {}), ...(same && state.seed ? { seed: state.seed } : {}) };
}
