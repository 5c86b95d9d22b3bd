/** Reading HAProxy's usage table and turning successive readings into counts per day that no restart loses. */
import { describe, expect, it } from "vitest";
import { absorb, deltas, EMPTY_LEDGER, type LedgerState } from "../usage/ledger.js";
import { parseReading, parseShowInfo, parseShowTable, type Counters, type Reading } from "../usage/table.js";

// As HAProxy 3.2.26's runtime API answers `show table st_usage`.
const TABLE = `# table: st_usage, type: string, size:102400, used:2
0x55ba10262250: key=ci-first/eth/http use=0 exp=86399818 shard=0 http_req_cnt=2 bytes_out_cnt=165 gpc0=6 gpc1=0 gpc2=1 gpc3=0
0x55ba10262390: key=team.b/strk/ws use=1 exp=86000000 shard=1 http_req_cnt=1 bytes_out_cnt=900 gpc0=12 gpc1=2 gpc2=0 gpc3=3

`;
const INFO = (pid: number, start: number, cumReq = 10) => `Name: HAProxy\nVersion: 3.2.26-1\nPid: ${pid}\nUptime_sec: 2\nCumReq: ${cumReq}\nBuild info: 3.2.26-1\nStart_time_sec: ${start}\n\n`;

const c = (calls: number, errors = 0, limited = 0, cacheHits = 0, requests = 0, bytesOut = 0): Counters => ({ calls, errors, limited, cacheHits, requests, bytesOut });
const reading = (pid: number, start: number, rows: Record<string, Counters>, cumReq = 10): Reading => ({
  process: { pid, startTimeSec: start, cumReq },
  rows: Object.entries(rows).map(([id, counters]) => {
    const [key, chain, iface] = id.split("/");
    return { key, chain, iface: iface as never, counters };
  }),
  problems: [],
});
const at = (iso: string) => new Date(iso);
const day = (s: LedgerState, d: string) => s.days[d] ?? {};

describe("show table", () => {
  it("reads each entry's key name, chain, interface and counters", () => {
    const t = parseShowTable(TABLE);
    expect(t.problems).toEqual([]);
    expect(t.rows).toEqual([
      { key: "ci-first", chain: "eth", iface: "http", counters: c(6, 0, 1, 0, 2, 165) },
      { key: "team.b", chain: "strk", iface: "ws", counters: c(12, 2, 0, 3, 1, 900) },
    ]);
  });

  it("reports an entry it cannot read instead of throwing, and ignores other tables and text", () => {
    const text = `# table: other, type: string, size:10, used:1\n0x1: key=a/eth/http use=0 exp=1 shard=0 gpc0=5\n${TABLE}0x55ba10262400: key=no\\ spaces/eth/http use=0 exp=1 shard=0 http_req_cnt=1 bytes_out_cnt=1 gpc0=1 gpc1=0 gpc2=0 gpc3=0\n0x55ba10262500: key=k/eth/http use=0 exp=1 shard=0 http_req_cnt=1\nsomething else\n`;
    const t = parseShowTable(text);
    expect(t.rows.map((r) => r.key)).toEqual(["ci-first", "team.b"]);
    expect(t.problems).toEqual(["entry 0x55ba10262400: its key is not <keyname>/<chain>/<interface>", "entry k/eth/http: no readable gpc0, gpc1, gpc2, gpc3, bytes_out_cnt"]);
  });

  it("knows the process from show info, and refuses an answer that is not HAProxy's or lacks the table", () => {
    expect(parseShowInfo(INFO(8, 1795775674, 42))).toEqual({ pid: 8, startTimeSec: 1795775674, cumReq: 42 });
    expect(parseReading(INFO(8, 1795775674) + TABLE).rows).toHaveLength(2);
    expect(() => parseReading("Unknown command: 'show'\n")).toThrow(/not one: "Unknown command/);
    expect(() => parseReading(`${INFO(8, 1)}No such table\n\n`)).toThrow("HAProxy has no table st_usage: No such table");
    // The connection closed within the table: its end (an empty line) never came.
    expect(() => parseReading(INFO(8, 1) + TABLE.trimEnd().split("\n").slice(0, 2).join("\n") + "\n")).toThrow("HAProxy's answer ended before the table st_usage did");
  });
});

describe("the ledger", () => {
  const T0 = at("2026-11-27T10:00:00Z");

  it("counts the first reading whole, then only what grew; the same reading twice adds nothing", () => {
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(6, 1, 1, 0, 2, 165) }), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(10, 1, 2, 1, 3, 300) }), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(10, 1, 2, 1, 3, 300) }), T0);
    expect(day(s, "2026-11-27")).toEqual({ "a/eth/http": c(10, 1, 2, 1, 3, 300) });
  });

  it("after a restart of HAProxy (new process, counters from 0) adds the new process's counts whole", () => {
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(50) }), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(70) }), T0);
    // The new process has counted past the old one's value already: only its identity tells.
    s = absorb(s, reading(9, 200, { "a/eth/http": c(80) }), T0);
    s = absorb(s, reading(9, 200, { "a/eth/http": c(85) }), T0);
    expect(day(s, "2026-11-27")["a/eth/http"].calls).toBe(70 + 85);
  });

  it("a restart that keeps Pid and Start_time_sec (same second, pid 1 in a container) shows in fewer requests", () => {
    let s = absorb(EMPTY_LEDGER, reading(1, 100, { "a/eth/http": c(5) }, 500), T0);
    s = absorb(s, reading(1, 100, { "a/eth/http": c(7) }, 3), T0);
    expect(day(s, "2026-11-27")["a/eth/http"].calls).toBe(12);
  });

  it("the same process whose request count (32 bits) wrapped is not a new one", () => {
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(5) }, 2 ** 32 - 3), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(7) }, 4), T0);
    expect(day(s, "2026-11-27")["a/eth/http"].calls).toBe(7);
  });

  it("an entry that expired and came back is counted whole, whether it was missed or seen lower", () => {
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(5), "b/eth/ws": c(9) }), T0);
    s = absorb(s, reading(8, 100, { "b/eth/ws": c(9) }), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(8), "b/eth/ws": c(2) }), T0);
    expect(day(s, "2026-11-27")).toEqual({ "a/eth/http": c(13), "b/eth/ws": c(11) });
  });

  it("goes on across a 32-bit counter's wrap to 0 (HAProxy's gpc and http_req_cnt), bytes being 64-bit", () => {
    const top = 2 ** 32;
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(top - 10, 0, 0, 0, top - 1, top + 5) }), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(15, 0, 0, 0, 2, top + 9) }), T0);
    expect(day(s, "2026-11-27")["a/eth/http"]).toEqual(c(top + 15, 0, 0, 0, top + 2, top + 9));
    // Bytes lower than before cannot be a wrap: the entry began again.
    s = absorb(s, reading(8, 100, { "a/eth/http": c(20, 0, 0, 0, 3, 7) }), T0);
    expect(day(s, "2026-11-27")["a/eth/http"]).toEqual(c(top + 15 + 20, 0, 0, 0, top + 2 + 3, top + 9 + 7));
  });

  it("puts each delta into the UTC day it was read, across midnight", () => {
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(5) }), at("2026-11-27T23:59:58Z"));
    s = absorb(s, reading(8, 100, { "a/eth/http": c(9) }), at("2026-11-28T00:00:03Z"));
    expect(s.days).toEqual({ "2026-11-27": { "a/eth/http": c(5) }, "2026-11-28": { "a/eth/http": c(4) } });
  });

  it("never counts negative amounts, and keeps no empty rows", () => {
    let s = absorb(EMPTY_LEDGER, reading(8, 100, { "a/eth/http": c(5, 0, 0, 0, 1, 10) }), T0);
    s = absorb(s, reading(8, 100, { "a/eth/http": c(5, 0, 0, 0, 1, 10), "b/eth/http": c(0) }), T0);
    expect(deltas(s, reading(8, 100, { "a/eth/http": c(5, 0, 0, 0, 1, 10) }))).toEqual(new Map());
    expect(Object.keys(day(s, "2026-11-27"))).toEqual(["a/eth/http"]);
    for (const v of Object.values(day(s, "2026-11-27")["a/eth/http"])) expect(v).toBeGreaterThanOrEqual(0);
  });
});
