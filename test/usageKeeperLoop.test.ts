/** The keeper's loop with HAProxy's answers given by the test: a ledger that cannot be saved is kept in memory and said so, then saved. */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startKeeper, type Keeper } from "../usage/keeper.js";
import { loadLedger } from "../usage/store.js";
import type { Reading } from "../usage/table.js";
import { eventually } from "./support/http.js";

let dir: string;
let keeper: Keeper | undefined;
beforeEach(() => void (dir = mkdtempSync(join(tmpdir(), "rpcstack-usage-loop-"))));
afterEach(async () => {
  await keeper?.stop();
  keeper = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const reading = (calls: number): Reading => ({ process: { pid: 8, startTimeSec: 100, cumReq: calls }, rows: [{ key: "a", chain: "eth", iface: "http", counters: { calls, errors: 0, limited: 0, cacheHits: 0, requests: calls, bytesOut: 10 * calls } }], problems: [] });

describe("the keeper's loop", () => {
  it("keeps counting in memory while the ledger cannot be saved (healthz 503, said once), and saves it when it can again", async () => {
    const file = join(dir, "usage.json");
    // A folder where the temporary file goes: every save fails until it is removed.
    const blocker = join(dir, `.usage.json.${process.pid}.tmp`);
    mkdirSync(blocker, { recursive: true });
    let calls = 3;
    const lines: string[] = [];
    keeper = startKeeper({ admin: "unused", file, intervalMs: 50, listen: { host: "127.0.0.1", port: 0 }, log: (l) => lines.push(l), read: async () => reading(calls) });
    const url = `http://127.0.0.1:${await keeper.ready}`;
    await eventually("healthz 503", () => fetch(`${url}/healthz`).then((r) => r.status), (s) => s === 503);
    calls = 7;
    await eventually("the counts in memory", async () => ((await (await fetch(`${url}/usage`)).json()) as { rows: { calls: number }[] }).rows[0]?.calls, (c) => c === 7);
    expect(lines.filter((l) => l.startsWith("cannot write the usage ledger"))).toHaveLength(1);
    rmSync(blocker, { recursive: true });
    await eventually("healthz 200", () => fetch(`${url}/healthz`).then((r) => r.status), (s) => s === 200);
    expect(Object.values(loadLedger(file).days)[0]["a/eth/http"].calls).toBe(7);
    expect(lines).toContain("the ledger is saved again");
  });

  it("gives up once HAProxy has not answered for giveUpMs, not before, and not again", async () => {
    // Each reading moves the clock 10 s: up twice, down 3 times (20 s from the first failure), up,
    // then down for good.
    const script = "uudddu" + "d".repeat(10);
    let t = 0;
    let reads = 0;
    const gaveUpAt: number[] = [];
    keeper = startKeeper({
      admin: "unused", file: join(dir, "usage.json"), intervalMs: 5, listen: { host: "127.0.0.1", port: 0 }, log: () => {}, now: () => new Date(t), giveUpMs: 30_000,
      onGiveUp: () => void gaveUpAt.push(t),
      read: async () => {
        const up = (script[reads++] ?? "d") === "u";
        t += 10_000;
        if (!up) throw new Error("connect ECONNREFUSED");
        return reading(1);
      },
    });
    await keeper.ready;
    await eventually("every scripted reading", async () => reads, (n) => n >= script.length);
    // The last failures began at the 7th reading (70 s): 30 s later, at the 10th, once.
    expect(gaveUpAt).toEqual([100_000]);
  });

  it("stop() reads once more and saves it", async () => {
    const file = join(dir, "usage.json");
    let calls = 2;
    keeper = startKeeper({ admin: "unused", file, intervalMs: 3_600_000, listen: { host: "127.0.0.1", port: 0 }, log: () => {}, read: async () => reading(calls) });
    await keeper.ready;
    calls = 9;
    expect(await keeper.stop()).toBe(true);
    keeper = undefined;
    expect(Object.values(loadLedger(file).days)[0]["a/eth/http"].calls).toBe(9);
  });
});
