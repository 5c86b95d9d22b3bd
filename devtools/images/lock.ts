/**
 * One image build at a time on this machine, across processes. On a fresh machine two test files
 * that build the test images at once (the end-to-end tests beside the rest, CI 2026-11-30) each
 * imported their own Debian base under the one tag: two image IDs, so every image hashed from the
 * base got two hashes, and each process removed the other's images as stale while the other still
 * needed them. Built one after the other, the second finds the first's images and builds nothing.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The lock file: it holds the PID of the process that builds. */
export const IMAGE_LOCK = join(tmpdir(), "rpcstack-images.lock");

let depth = 0;

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Whether a process of this PID runs (a holder that died leaves its lock behind). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Runs `build` holding the lock (taken again by the same process, it just runs). Waits for another
 * process's build to end, at most `waitMs`; takes over the lock of a process that died.
 */
export function withImageLock<T>(build: () => T, log: (s: string) => void, lock = IMAGE_LOCK, waitMs = 1_800_000): T {
  if (depth > 0) return build();
  const t0 = Date.now();
  let said = false;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: "wx" });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(lock, "utf8"));
    } catch {
      continue; // removed meanwhile: try again
    }
    // An empty file is one being written: its PID comes next.
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      // Removed only while it still names the dead process (another waiter may have taken it over).
      let still = false;
      try {
        still = Number(readFileSync(lock, "utf8")) === holder;
      } catch {
        // gone already
      }
      if (still) {
        log(`the image lock ${lock} was held by process ${holder}, which is gone: taking it over`);
        rmSync(lock, { force: true });
      }
      continue;
    }
    if (Date.now() - t0 > waitMs) throw new Error(`the image lock ${lock} is still held by process ${holder} after ${Math.round(waitMs / 1000)} s`);
    if (!said) log(`waiting for process ${holder}, which is building the test images (${lock})`);
    said = true;
    sleepSync(250);
  }
  depth++;
  try {
    return build();
  } finally {
    depth--;
    rmSync(lock, { force: true });
  }
}
