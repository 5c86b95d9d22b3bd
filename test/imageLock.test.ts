/** One test-image build at a time across processes (devtools/images/lock.ts). */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { withImageLock } from "../devtools/images/lock.js";
import { ROOT } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "rpcstack-image-lock-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = () => {};

describe("the image lock", () => {
  it("lets one process build at a time: two builds started together run one after the other", async () => {
    const lock = join(dir, "two.lock");
    const log = join(dir, "two.log");
    writeFileSync(log, "");
    const builder = (name: string) =>
      new Promise<number | null>((resolve) => {
        const code = `const { appendFileSync } = require("node:fs");
const { withImageLock } = require(${JSON.stringify(join(ROOT, "devtools/images/lock.ts"))});
withImageLock(() => {
  appendFileSync(${JSON.stringify(log)}, "${name} start\\n");
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
  appendFileSync(${JSON.stringify(log)}, "${name} end\\n");
}, () => {}, ${JSON.stringify(lock)});`;
        spawn(process.execPath, ["--import", "tsx", "-e", code], { cwd: ROOT, stdio: "ignore" }).on("exit", resolve);
      });
    expect(await Promise.all([builder("a"), builder("b")])).toEqual([0, 0]);
    const lines = readFileSync(log, "utf8").trim().split("\n");
    expect(lines).toHaveLength(4);
    // Each start is followed by its own end.
    expect(lines[1]).toBe(lines[0].replace("start", "end"));
    expect(lines[3]).toBe(lines[2].replace("start", "end"));
    expect(existsSync(lock)).toBe(false);
  });

  it("takes over the lock of a process that is gone, and says so", () => {
    const lock = join(dir, "dead.lock");
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid;
    writeFileSync(lock, String(gone));
    const said: string[] = [];
    expect(withImageLock(() => "built", (s) => said.push(s), lock, 5_000)).toBe("built");
    expect(said).toEqual([`the image lock ${lock} was held by process ${gone}, which is gone: taking it over`]);
    expect(existsSync(lock)).toBe(false);
  });

  it("waits for a live holder, and gives up after its wait naming it", () => {
    const lock = join(dir, "held.lock");
    writeFileSync(lock, String(process.ppid));
    expect(() => withImageLock(() => "built", quiet, lock, 600)).toThrow(`the image lock ${lock} is still held by process ${process.ppid} after 1 s`);
    expect(readFileSync(lock, "utf8")).toBe(String(process.ppid));
  });

  it("is taken again by the process that holds it (the test images build the Debian ones inside)", () => {
    const lock = join(dir, "nested.lock");
    expect(withImageLock(() => withImageLock(() => "inner", quiet, lock, 600), quiet, lock, 600)).toBe("inner");
    expect(existsSync(lock)).toBe(false);
  });

  it("lets the lock go when the build fails", () => {
    const lock = join(dir, "fails.lock");
    expect(() => withImageLock(() => { throw new Error("docker build failed"); }, quiet, lock)).toThrow("docker build failed");
    expect(existsSync(lock)).toBe(false);
  });
});
