/** Usage for people and for billing: rows of the ledger over a period, summed, as a table, JSON or CSV. */
import { addCounters, type LedgerState } from "./ledger.js";
import { COUNTER_NAMES, ZERO, parseEntryId, type Counters } from "./table.js";

export interface UsageRow extends Counters {
  /** The UTC day, or the period's first and last day joined by ".." when days are summed. */
  readonly day: string;
  readonly key: string;
  readonly chain: string;
  readonly interface: string;
}

export interface Period {
  readonly since?: string;
  readonly until?: string;
  readonly key?: string;
}

/** A calendar day written YYYY-MM-DD (a date that does not exist, like 2026-02-30, is not one). */
export function isDay(v: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === v;
}

const byRow = (a: UsageRow, b: UsageRow) => a.day.localeCompare(b.day) || a.key.localeCompare(b.key) || a.chain.localeCompare(b.chain) || a.interface.localeCompare(b.interface);

/** One row per day, key name, chain and interface within the period (both ends included). */
export function dayRows(state: LedgerState, p: Period): UsageRow[] {
  const rows: UsageRow[] = [];
  for (const [day, entries] of Object.entries(state.days)) {
    if ((p.since && day < p.since) || (p.until && day > p.until)) continue;
    for (const [id, c] of Object.entries(entries)) {
      const e = parseEntryId(id);
      if (e && (!p.key || e.key === p.key)) rows.push({ day, key: e.key, chain: e.chain, interface: e.iface, ...c });
    }
  }
  return rows.sort(byRow);
}

const counters = (r: Counters): Counters => Object.fromEntries(COUNTER_NAMES.map((n) => [n, r[n]])) as unknown as Counters;

/** Rows with the same `id` summed into one, named `day`. */
function sumRows(rows: readonly UsageRow[], id: (r: UsageRow) => string, day: (r: UsageRow) => string): UsageRow[] {
  const sums = new Map<string, UsageRow>();
  for (const r of rows) {
    const prev = sums.get(id(r));
    sums.set(id(r), { day: day(r), key: r.key, chain: r.chain, interface: r.interface, ...addCounters(prev ? counters(prev) : ZERO, counters(r)) });
  }
  return [...sums.values()].sort(byRow);
}

/** The rows summed over their days, per key name, chain and interface; `day` names the period. */
export function sumDays(rows: readonly UsageRow[], p: Period): UsageRow[] {
  const days = rows.map((r) => r.day).sort();
  const period = `${p.since ?? days[0] ?? ""}..${p.until ?? days[days.length - 1] ?? ""}`;
  return sumRows(rows, (r) => `${r.key}/${r.chain}/${r.interface}`, () => period);
}

/** Rows of one day, key name, chain and interface (from several replicas' ledgers) summed into one. */
export const mergeDays = (rows: readonly UsageRow[]): UsageRow[] => sumRows(rows, (r) => `${r.day}/${r.key}/${r.chain}/${r.interface}`, (r) => r.day);

/** Table, CSV and JSON name each column alike: a bill is checked against any of them. */
const COLUMNS = ["day", "key", "chain", "interface", ...COUNTER_NAMES] as const;

export const asJson = (rows: readonly UsageRow[]) => `${JSON.stringify(rows, null, 2)}\n`;

/** RFC 4180: CRLF line ends, a field with a comma, quote or line break quoted, its quotes doubled. */
export function asCsv(rows: readonly UsageRow[]): string {
  const field = (v: string | number) => (/[",\r\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v));
  return [[...COLUMNS], ...rows.map((r) => COLUMNS.map((c) => r[c]))].map((line) => `${line.map(field).join(",")}\r\n`).join("");
}

/** Aligned columns (numbers to the right) with a totals row. */
export function asTable(rows: readonly UsageRow[]): string {
  if (!rows.length) return "no usage in this period\n";
  const total = rows.reduce((t, r) => addCounters(t, counters(r)), ZERO);
  const cells = [[...COLUMNS], ...rows.map((r) => COLUMNS.map((c) => String(r[c]))), ["total", "", "", "", ...COUNTER_NAMES.map((n) => String(total[n]))]];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  const numeric = (i: number) => i >= 4;
  return cells.map((line) => line.map((v, i) => (numeric(i) ? v.padStart(widths[i]) : v.padEnd(widths[i]))).join("  ").trimEnd()).join("\n") + "\n";
}
