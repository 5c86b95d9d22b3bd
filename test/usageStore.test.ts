/** The ledger on its volume: written whole or not at all, private, and never replaced when it cannot be read. */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EMPTY_LEDGER, type LedgerState } from "../usage/ledger.js";
import { LedgerFileError, loadLedger, saveLedger } from "../usage/store.js";

const STATE: LedgerState = {
  version: 1,
  days: { "2026-11-27": { "a/eth/http": { calls: 6, errors: 0, limited: 1, cacheHits: 0, requests: 2, bytesOut: 165 } } },
  last: { process: { pid: 8, startTimeSec: 1795775674, cumReq: 4 }, entries: { "a/eth/http": { calls: 6, errors: 0, limited: 1, cacheHits: 0, requests: 2, bytesOut: 165 } } },
};

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rpcstack-usage-"));
  file = join(dir, "usage.json");
});
afterEach(() => {
  chmodSync(dir, 0o700);
  rmSync(dir, { recursive: true, force: true });
});

describe("the ledger file", () => {
  it("a missing file is an empty ledger; a saved one reads back the same, mode 0600, with no temporary file left", () => {
    expect(loadLedger(file)).toEqual(EMPTY_LEDGER);
    saveLedger(file, STATE);
    expect(loadLedger(file)).toEqual(STATE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["usage.json"]);
  });

  it("replaces the old ledger only by renaming a complete new one over it", () => {
    saveLedger(file, EMPTY_LEDGER);
    const before = statSync(file).ino;
    saveLedger(file, STATE);
    expect(statSync(file).ino).not.toBe(before);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(STATE);
  });

  it("a write that fails leaves the old ledger as it was, and names the file", () => {
    saveLedger(file, STATE);
    // A folder where the temporary file goes fails the write (folder permissions do not stop root).
    mkdirSync(join(dir, `.usage.json.${process.pid}.tmp`));
    expect(() => saveLedger(file, EMPTY_LEDGER)).toThrow(LedgerFileError);
    expect(() => saveLedger(file, EMPTY_LEDGER)).toThrow(`cannot write the usage ledger ${file}`);
    expect(loadLedger(file)).toEqual(STATE);
  });

  it.each([
    ["half a file", '{"version":1,"days":{"2026-11-27":{"a/eth/ht'],
    ["another version", '{"version":2,"days":{}}'],
    ["a negative count", JSON.stringify({ version: 1, days: { "2026-11-27": { "a/eth/http": { ...STATE.days["2026-11-27"]["a/eth/http"], calls: -1 } } } })],
    ["an entry that is not a key name, chain and interface", JSON.stringify({ version: 1, days: { "2026-11-27": { "a b": STATE.days["2026-11-27"]["a/eth/http"] } } })],
    ["a broken last reading", JSON.stringify({ ...STATE, last: { process: { pid: 8 }, entries: {} } })],
  ])("refuses %s, naming the file, and leaves it untouched", (_, text) => {
    writeFileSync(file, text);
    const before = statSync(file).mtimeMs;
    expect(() => loadLedger(file)).toThrow(LedgerFileError);
    expect(() => loadLedger(file)).toThrow(file);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect(statSync(file).mtimeMs).toBe(before);
  });

  it("a file it cannot read is an error, not an empty ledger", () => {
    mkdirSync(file);
    expect(() => loadLedger(file)).toThrow(`cannot read the usage ledger ${file}: is a folder, not a file`);
  });
});
