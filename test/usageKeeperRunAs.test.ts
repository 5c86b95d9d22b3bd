/**
 * The usage keeper started as root, as its container starts it, with --run-as: it hands the
 * ledger's folder (root-owned, as Docker creates a volume, with a ledger an older keeper wrote as
 * root) to that user, runs as it, and keeps every count. Real HAProxy 3.2 behind its runtime API
 * on TCP, as in the gateway's container.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { HAPROXY_LOOPBACK_FLAGS, haproxyBinary } from "../devtools/haproxy.js";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { ledgerOwnFile } from "../usage/runAs.js";
import { saveLedger } from "../usage/store.js";
import type { Counters } from "../usage/table.js";
import { ROOT } from "./harness.js";
import { freePort, start, stopEach, waitFor, type Child } from "./support/net.js";

const TSX = join(ROOT, "node_modules/.bin/tsx");
const KEEPER = join(ROOT, "usage/keeperMain.ts");
const dir = mkdtempSync(join(tmpdir(), "rpcstack-usage-runas-"));
// The folder above the volume is readable by anyone, as /var/lib is.
chmodSync(dir, 0o755);
const started: Child[] = [];
afterAll(async () => {
  await stopEach(...started.reverse());
  rmSync(dir, { recursive: true, force: true });
});

const exitCode = (k: Child) => new Promise<number | null>((r) => (k.proc.exitCode !== null ? r(k.proc.exitCode) : k.proc.once("exit", (x) => r(x))));
const c = (calls: number): Counters => ({ calls, errors: 0, limited: 0, cacheHits: 0, requests: calls, bytesOut: 10 * calls });

async function haproxyAdmin(): Promise<string> {
  const admin = `127.0.0.1:${await freePort()}`;
  writeFileSync(join(dir, "haproxy.cfg"), `global\n  stats socket ipv4@${admin} level admin\nbackend st_usage\n  stick-table type string len 160 size 1k expire 1d store http_req_cnt,bytes_out_cnt,gpc(4)\n`);
  const h = start(haproxyBinary(), [...HAPROXY_LOOPBACK_FLAGS, "-f", join(dir, "haproxy.cfg")]);
  started.push(h);
  await waitFor("HAProxy's runtime API", async () => ((await runtimeCommand(admin, "show info").catch(() => "")).includes("Pid:") ? true : undefined), 10_000).catch((e) => {
    throw new Error(`${(e as Error).message}\n${h.output()}`);
  });
  return admin;
}

describe("the usage keeper with --run-as", () => {
  it("takes over a root-owned folder and ledger, runs as the user, and loses no count", async () => {
    expect(process.getuid!(), "this test starts the keeper as root, as its container does").toBe(0);
    const admin = await haproxyAdmin();
    const data = join(dir, "data");
    mkdirSync(data, { mode: 0o755 });
    const file = join(data, "usage.json");
    saveLedger(file, { version: 1, days: { "2026-11-01": { "old/eth/http": c(41) } } });
    // What an ext4 claim (a cloud disk) holds at its root: the file system's, left to root.
    mkdirSync(join(data, "lost+found"), { mode: 0o700 });
    const before = statSync(file);
    expect([before.uid, statSync(data).uid]).toEqual([0, 0]);

    const k = start(TSX, [KEEPER, "--admin", admin, "--file", file, "--listen", "127.0.0.1:0", "--interval-seconds", "0.2", "--run-as", "1000:1000"], { cwd: ROOT });
    started.push(k);
    const port = await waitFor("the keeper", async () => /serving \/metrics and \/usage on 127\.0\.0\.1:(\d+)/.exec(k.output())?.[1], 30_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${k.output()}`);
    });
    // A reading saved after the switch is a new file (written, then renamed): its owner is the
    // user the process runs as.
    await waitFor("a ledger saved by the keeper", async () => (statSync(file).ino !== before.ino ? true : undefined), 10_000);
    const after = statSync(file);
    expect([after.uid, after.gid, after.mode & 0o777]).toEqual([1000, 1000, 0o600]);
    expect([statSync(data).uid, statSync(data).gid]).toEqual([1000, 1000]);
    expect(statSync(join(data, "lost+found")).uid).toBe(0);
    const { rows } = (await (await fetch(`http://127.0.0.1:${port}/usage?since=2026-11-01&until=2026-11-01`)).json()) as { rows: { key: string; calls: number }[] };
    expect(rows.map((r) => [r.key, r.calls])).toEqual([["old", 41]]);
    expect(k.output()).not.toMatch(/cannot|HAProxy did not answer/);
  }, 60_000);

  it("refuses to change user when not started as root, saying why (exit 1), and leaves the ledger as it was", async () => {
    const data = join(dir, "mine");
    mkdirSync(data, { mode: 0o777 });
    const file = join(data, "usage.json");
    saveLedger(file, { version: 1, days: { "2026-11-02": { "kept/eth/http": c(7) } } });
    chmodSync(file, 0o644);
    const text = readFileSync(file, "utf8");
    const k = start("setpriv", ["--reuid=1000", "--regid=1000", "--clear-groups", TSX, KEEPER, "--admin", "127.0.0.1:9", "--file", file, "--listen", "127.0.0.1:0", "--run-as", "1001:1001"], { cwd: ROOT, env: { ...process.env, HOME: dir } });
    started.push(k);
    expect(await exitCode(k)).toBe(1);
    expect(k.output()).toContain("rpcstack-usage: cannot run as 1001:1001: started as uid 1000, and only root may change user");
    expect([readFileSync(file, "utf8"), statSync(file).uid]).toEqual([text, 0]);
  }, 60_000);

  it("refuses a ledger's folder that holds anything else, and gives nothing away (exit 1)", async () => {
    const shared = join(dir, "shared");
    mkdirSync(shared, { mode: 0o755 });
    writeFileSync(join(shared, "other.conf"), "someone else's\n");
    const k = start(TSX, [KEEPER, "--admin", "127.0.0.1:9", "--file", join(shared, "usage.json"), "--listen", "127.0.0.1:0", "--run-as", "1000:1000"], { cwd: ROOT });
    started.push(k);
    expect(await exitCode(k)).toBe(1);
    expect(k.output()).toContain(`--run-as: the ledger's folder ${shared} holds "other.conf", not the ledger's: give --file a folder of its own`);
    expect([statSync(shared).uid, statSync(join(shared, "other.conf")).uid]).toEqual([0, 0]);
  }, 60_000);

  it("counts as the ledger's own only the ledger and the temporary files saveLedger writes", () => {
    expect(["usage.json", ".usage.json.42.tmp", ".usage.json.tmp", "usage.json.tmp", ".other.json.42.tmp", "lost+found"].filter((e) => ledgerOwnFile("usage.json", e))).toEqual(["usage.json", ".usage.json.42.tmp"]);
  });

  it.each([
    ["0:0", "--run-as 0:0: that is root"],
    ["1000", '--run-as must be UID:GID, two numbers (got "1000")'],
    ["a:b", '--run-as must be UID:GID, two numbers (got "a:b")'],
  ])("--run-as %s: exit 2 saying why", async (value, why) => {
    const k = start(TSX, [KEEPER, "--admin", "127.0.0.1:9", "--file", join(dir, "x.json"), "--listen", "127.0.0.1:0", "--run-as", value], { cwd: ROOT });
    started.push(k);
    expect(await exitCode(k)).toBe(2);
    expect(k.output()).toContain(why);
  }, 30_000);
});
