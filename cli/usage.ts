/**
 * npm run usage: usage per key name for people and for billing, from the usage keeper (--url) or
 * its ledger file (--file); with several gateway replicas, from each replica's, summed.
 */
import { parseArgs } from "node:util";
import { optionsOrExit, UsageError } from "../kit/args.js";
import { asCsv, asJson, asTable, dayRows, isDay, mergeDays, sumDays, type Period, type UsageRow } from "../usage/report.js";
import { loadLedger } from "../usage/store.js";
import { USAGE_PORT } from "../services/usage.js";
import { systemReason } from "../kit/errors.js";

/** Where a Docker host's gateway container publishes the keeper: its loopback (services/usage.ts). */
export const DEFAULT_KEEPER_URL = `http://127.0.0.1:${USAGE_PORT}`;

const USAGE = `usage: npm run usage -- --since YYYY-MM-DD [--until YYYY-MM-DD] [--key NAME] [--by day]
                       [--format table|json|csv] [--url http://HOST:PORT... | --file PATH...]
Usage per key name, chain and interface, summed over the period (UTC days, both included), and
over the sources: give each gateway replica's keeper (or ledger) once.
  --since DAY       first day
  --until DAY       last day (default: today)
  --key NAME        one key name only
  --by day          a row per day instead of one per period
  --format F        table (default, for people), json or csv (for billing)
  --url URL         the usage keeper (its /usage); default: ${DEFAULT_KEEPER_URL}, where the
                    gateway's host publishes it (run there, or through an SSH tunnel to it)
  --file PATH       the keeper's ledger file, instead of the keeper
                    (both repeatable; one ledger given twice is refused: it would count twice)
  --help            this text
Exit: 0 done, 1 the keeper or the file could not be read, 2 bad arguments.`;

const FORMATS = { table: asTable, json: asJson, csv: asCsv } as const;

export interface ReportOptions {
  readonly period: Required<Pick<Period, "since">> & Period;
  readonly byDay: boolean;
  readonly format: keyof typeof FORMATS;
  /** `defaulted`: the URL is DEFAULT_KEEPER_URL because none was given. */
  readonly sources: readonly ({ readonly url: string; readonly defaulted?: boolean } | { readonly file: string })[];
}

export function parseReportArgs(argv: string[]): ReportOptions | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { since: { type: "string" }, until: { type: "string" }, key: { type: "string" }, by: { type: "string" }, format: { type: "string" }, url: { type: "string", multiple: true }, file: { type: "string", multiple: true }, help: { type: "boolean" } },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return "help";
  if (!values.since) throw new UsageError("--since is required (a day written YYYY-MM-DD)");
  for (const name of ["since", "until"] as const) if (values[name] !== undefined && !isDay(values[name]!)) throw new UsageError(`--${name} must be a day written YYYY-MM-DD (got "${values[name]}")`);
  if (values.until && values.until < values.since) throw new UsageError(`--until (${values.until}) is before --since (${values.since})`);
  const format = values.format ?? "table";
  if (!(format in FORMATS)) throw new UsageError(`--format must be table, json or csv (got "${format}")`);
  if (values.by !== undefined && values.by !== "day") throw new UsageError(`--by accepts only "day" (got "${values.by}")`);
  if (values.url !== undefined && values.file !== undefined) throw new UsageError("give --url (the usage keepers) or --file (their ledgers), not both");
  for (const url of values.url ?? []) if (!/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`--url must be an http:// or https:// URL (got "${url}")`);
  if (values.file?.includes("")) throw new UsageError("--file must name the ledger file (got an empty name)");
  return {
    period: { since: values.since, until: values.until ?? new Date().toISOString().slice(0, 10), key: values.key },
    byDay: values.by === "day",
    format: format as keyof typeof FORMATS,
    sources: values.file?.map((file) => ({ file })) ?? values.url?.map((url) => ({ url })) ?? [{ url: DEFAULT_KEEPER_URL, defaulted: true }],
  };
}

async function fetchRows({ url: base, defaulted }: { url: string; defaulted?: boolean }, p: ReportOptions["period"]): Promise<{ rows: UsageRow[]; ledger?: string }> {
  const q = new URLSearchParams({ since: p.since, ...(p.until ? { until: p.until } : {}), ...(p.key ? { key: p.key } : {}) });
  const url = `${base.replace(/\/+$/, "")}/usage?${q}`;
  const res = await fetch(url).catch((e) => {
    const hint = defaulted ? " (no --url was given: run this on the gateway's host, or give --url through a tunnel to it, or --file)" : "";
    throw new Error(`the usage keeper at ${base} did not answer: ${systemReason((e as { cause?: unknown }).cause ?? e)}${hint}`);
  });
  if (!res.ok) throw new Error(`the usage keeper at ${base} answered ${res.status}: ${(await res.text()).trim().slice(0, 200)}`);
  return (await res.json()) as { rows: UsageRow[]; ledger?: string };
}

/** The report's text. */
export async function report(o: ReportOptions): Promise<string> {
  const read = await Promise.all(
    o.sources.map(async (s) => {
      if ("url" in s) return { from: s.url, ...(await fetchRows(s, o.period)) };
      const ledger = loadLedger(s.file);
      return { from: s.file, rows: dayRows(ledger, o.period), ledger: ledger.id };
    }),
  );
  const seen = new Map<string, string>();
  for (const r of read) {
    if (!r.ledger) continue;
    const twice = seen.get(r.ledger);
    if (twice) throw new Error(`${twice} and ${r.from} are the same ledger (${r.ledger}): its counts would be added twice; give each replica's own keeper or file once`);
    seen.set(r.ledger, r.from);
  }
  const rows = mergeDays(read.flatMap((r) => r.rows));
  return FORMATS[o.format](o.byDay ? rows : sumDays(rows, o.period));
}

export async function main(argv: string[]): Promise<number> {
  const options = optionsOrExit("usage", USAGE, () => parseReportArgs(argv));
  if (typeof options === "number") return options;
  try {
    process.stdout.write(await report(options));
    return 0;
  } catch (e) {
    process.stderr.write(`usage: ${(e as Error).message}\n`);
    return 1;
  }
}

if (require.main === module) {
  // A connection dropped in a certain way (a published port whose container is restarting) can
  // leave fetch's promise pending with nothing left to wait on: Node then exits, and must not
  // exit 0 with nothing printed.
  let done = false;
  process.exitCode = 1;
  process.once("beforeExit", () => done || process.stderr.write("usage: the usage keeper's connection ended without an answer\n"));
  void main(process.argv.slice(2)).then((code) => ((done = true), (process.exitCode = code)));
}
