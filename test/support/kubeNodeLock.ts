/**
 * One one-node cluster per machine (its bridge, node IP and iptables chains are fixed): test files
 * that each start one take turns. The lock is a directory (made atomically) holding its owner's
 * pid; a lock whose owner died is taken over.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const LOCK = "/run/lock/rpcstack-kubenode";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Waits until this process holds the lock (up to `timeoutMs`); resolves to its release. */
export async function holdKubeNodeLock(timeoutMs = 30 * 60_000): Promise<() => void> {
  const t0 = Date.now();
  const token = `${process.pid} ${Math.random().toString(36).slice(2)}`;
  for (let said = false; ; ) {
    try {
      mkdirSync(LOCK, { recursive: false });
      writeFileSync(join(LOCK, "owner"), token);
      return () => {
        try {
          if (readFileSync(join(LOCK, "owner"), "utf8") === token) rmSync(LOCK, { recursive: true, force: true });
        } catch {}
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") mkdirSync("/run/lock", { recursive: true });
      else if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    let owner = "";
    try {
      owner = readFileSync(join(LOCK, "owner"), "utf8");
    } catch {}
    const pid = Number(owner.split(" ")[0]);
    // No owner yet (just made) counts as alive; a dead one's lock is removed and tried again.
    if (owner && !alive(pid)) {
      rmSync(LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`another one-node cluster (pid ${pid || "unknown"}, ${LOCK}) ran for ${Math.round(timeoutMs / 60_000)} min: gave up waiting`);
    if (!said) console.log(`waiting for the one-node cluster of pid ${pid || "unknown"} to stop (${LOCK})`);
    said = true;
    await new Promise((r) => setTimeout(r, 1_000));
  }
}
