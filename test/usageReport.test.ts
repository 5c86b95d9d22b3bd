/** The ledger as people, billing and Prometheus see it: metrics, reports and `npm run usage`'s arguments. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_KEEPER_URL, main, parseReportArgs, report } from "../cli/usage.js";
import { type LedgerState } from "../usage/ledger.js";
import { labelValue, usageMetrics } from "../usage/metrics.js";
import { asCsv, asTable, dayRows, isDay, sumDays } from "../usage/report.js";
import { saveLedger } from "../usage/store.js";
import type { Counters } from "../usage/table.js";
import { freePort } from "./support/net.js";
import { promtool } from "./support/prometheus.js";

const c = (calls: number, errors = 0, limited = 0, cacheHits = 0, requests = 0, bytesOut = 0): Counters => ({ calls, errors, limited, cacheHits, requests, bytesOut });
const STATE: LedgerState = {
  version: 1,
  days: {
    "2026-10-31": { "a/eth/http": c(1000) },
    "2026-11-01": { "a/eth/http": c(6, 1, 1, 0, 2, 165), "b.x/strk/ws": c(12, 2, 0, 3, 1, 900) },
    "2026-11-02": { "a/eth/http": c(4, 0, 0, 2, 4, 35) },
  },
};

describe("Prometheus metrics", () => {
  const text = usageMetrics(STATE);

  it("are the totals over every day per key name, chain and interface", () => {
    expect(text).toContain('rpcstack_usage_calls_total{key="a",chain="eth",interface="http"} 1010\n');
    expect(text).toContain('rpcstack_usage_limited_total{key="b.x",chain="strk",interface="ws"} 0\n');
    expect(text).toContain('rpcstack_usage_bytes_out_total{key="a",chain="eth",interface="http"} 200\n');
    expect(text).toContain("# TYPE rpcstack_usage_cache_hits_total counter\n");
  });

  it("pass promtool check metrics (the pinned Prometheus release's)", () => {
    const r = promtool(["check", "metrics"], tmpdir(), text);
    expect(r.output).toBe("");
    expect(r.status).toBe(0);
  });

  it("escape label values as the exposition format says", () => {
    expect(labelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd');
  });
});

describe("reports", () => {
  const november = { since: "2026-11-01", until: "2026-11-30" };

  it("take only the days of the period and the key asked for", () => {
    expect(dayRows(STATE, november).map((r) => `${r.day} ${r.key}`)).toEqual(["2026-11-01 a", "2026-11-01 b.x", "2026-11-02 a"]);
    expect(dayRows(STATE, { ...november, key: "b.x" })).toEqual([{ day: "2026-11-01", key: "b.x", chain: "strk", interface: "ws", ...c(12, 2, 0, 3, 1, 900) }]);
  });

  it("sum the period's days per key name, chain and interface", () => {
    expect(sumDays(dayRows(STATE, november), november)).toEqual([
      { day: "2026-11-01..2026-11-30", key: "a", chain: "eth", interface: "http", ...c(10, 1, 1, 2, 6, 200) },
      { day: "2026-11-01..2026-11-30", key: "b.x", chain: "strk", interface: "ws", ...c(12, 2, 0, 3, 1, 900) },
    ]);
  });

  it("as a table: aligned columns, numbers to the right, a totals row", () => {
    expect(asTable(sumDays(dayRows(STATE, november), november))).toBe(
      [
        "day                     key  chain  interface  calls  errors  limited  cacheHits  requests  bytesOut",
        "2026-11-01..2026-11-30  a    eth    http          10       1        1          2         6       200",
        "2026-11-01..2026-11-30  b.x  strk   ws            12       2        0          3         1       900",
        "total                                             22       3        1          5         7      1100",
        "",
      ].join("\n"),
    );
    expect(asTable([])).toBe("no usage in this period\n");
  });

  it("as CSV per RFC 4180: a header row, CRLF, fields with commas or quotes quoted", () => {
    const rows = dayRows(STATE, { since: "2026-11-02" });
    expect(asCsv(rows)).toBe("day,key,chain,interface,calls,errors,limited,cacheHits,requests,bytesOut\r\n2026-11-02,a,eth,http,4,0,0,2,4,35\r\n");
    expect(asCsv([{ ...rows[0], key: 'odd,"name"' }]).split("\r\n")[1]).toBe('2026-11-02,"odd,""name""",eth,http,4,0,0,2,4,35');
  });

  it("know a calendar day", () => {
    expect(["2026-11-01", "2028-02-29"].every(isDay)).toBe(true);
    expect(["2026-02-30", "2026-13-01", "26-11-01", "2026-11-1", "yesterday"].some(isDay)).toBe(false);
  });
});

describe("npm run usage", () => {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-usage-cli-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const o = process.stdout.write;
    const e = process.stderr.write;
    process.stdout.write = ((s: string) => (out.push(s), true)) as never;
    process.stderr.write = ((s: string) => (err.push(s), true)) as never;
    try {
      return { code: await main(argv), out: out.join(""), err: err.join("") };
    } finally {
      process.stdout.write = o;
      process.stderr.write = e;
    }
  };

  it.each([
    [["--until", "2026-11-30", "--file", "x"], "--since is required"],
    [["--since", "2026-11-31", "--file", "x"], '--since must be a day written YYYY-MM-DD (got "2026-11-31")'],
    [["--since", "2026-11-02", "--until", "2026-11-01", "--file", "x"], "--until (2026-11-01) is before --since (2026-11-02)"],
    [["--since", "2026-11-01", "--format", "xml", "--file", "x"], '--format must be table, json or csv (got "xml")'],
    [["--since", "2026-11-01", "--by", "week", "--file", "x"], '--by accepts only "day" (got "week")'],
    [["--since", "2026-11-01", "--url", "u", "--file", "x"], "give --url (the usage keepers) or --file (their ledgers), not both"],
    [["--since", "2026-11-01", "--url", ""], '--url must be an http:// or https:// URL (got "")'],
    [["--since", "2026-11-01", "--file", ""], "--file must name the ledger file (got an empty name)"],
    [["--since", "2026-11-01", "--file", "x", "--fromat", "csv"], "Unknown option '--fromat'"],
  ])("refuses %j with exit 2 and says why", async (argv, why) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(why);
    expect(r.out).toBe("");
  });

  it("--help prints how to use it, exit 0", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^usage: npm run usage -- --since YYYY-MM-DD/);
  });

  it("reads the ledger file: JSON summed over the period, CSV kept per day with --by day", async () => {
    const file = join(dir, "usage.json");
    saveLedger(file, STATE);
    const json = await run(["--since", "2026-11-01", "--until", "2026-11-30", "--format", "json", "--file", file]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).map((r: { key: string; calls: number }) => [r.key, r.calls])).toEqual([["a", 10], ["b.x", 12]]);
    const csv = await run(["--since", "2026-11-01", "--until", "2026-11-30", "--format", "csv", "--by", "day", "--key", "a", "--file", file]);
    expect(csv.out.split("\r\n").slice(1, 3)).toEqual(["2026-11-01,a,eth,http,6,1,1,0,2,165", "2026-11-02,a,eth,http,4,0,0,2,4,35"]);
  });

  it("a keeper that does not answer or a ledger that cannot be read: exit 1, saying which", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const r = await run(["--since", "2026-11-01", "--url", closed]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`the usage keeper at ${closed} did not answer`);
    const f = await run(["--since", "2026-11-01", "--file", dir]);
    expect(f.code).toBe(1);
    expect(f.err).toContain(`cannot read the usage ledger ${dir}`);
  });

  it("without --url or --file asks the keeper where the gateway's host publishes it, and says so when it does not answer", async () => {
    expect(DEFAULT_KEEPER_URL).toBe("http://127.0.0.1:9107");
    const o = parseReportArgs(["--since", "2026-11-01"]);
    expect(o).toMatchObject({ sources: [{ url: DEFAULT_KEEPER_URL, defaulted: true }] });
    // The same options against a port where nothing listens (9107 may be taken on this machine).
    const closed = `http://127.0.0.1:${await freePort()}`;
    const err = await report({ ...(o as Exclude<typeof o, "help">), sources: [{ url: closed, defaulted: true }] }).catch((e: Error) => e.message);
    expect(err).toContain(`the usage keeper at ${closed} did not answer`);
    expect(err).toContain("no --url was given: run this on the gateway's host, or give --url through a tunnel to it, or --file");
    const given = await report({ ...(o as Exclude<typeof o, "help">), sources: [{ url: closed }] }).catch((e: Error) => e.message);
    expect(given).not.toContain("no --url was given");
  });

  it("defaults: the table format, summed over the period", () => {
    expect(parseReportArgs(["--since", "2026-11-01", "--file", "f"])).toMatchObject({ format: "table", byDay: false, sources: [{ file: "f" }] });
  });
});
