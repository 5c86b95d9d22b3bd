/** A real EVM node from npm (hardhat 2), on a loopback port the test picks, mining every second. */
import { join } from "node:path";
import { freePort, jsonRpc, start, waitFor, type Child } from "./net.js";

// Not from the harness: the benchmark uses this module outside vitest.
const ROOT = join(__dirname, "..");

export interface EvmNode {
  readonly url: string;
  readonly wsUrl: string;
  readonly port: number;
  /** The node's process id, for CPU figures (the bench). */
  readonly pid: number;
  stop(): Promise<void>;
}

export async function startHardhat(): Promise<EvmNode> {
  const port = await freePort();
  const child: Child = start(
    process.execPath,
    [join(ROOT, "node_modules/hardhat/internal/cli/cli.js"), "node", "--hostname", "127.0.0.1", "--port", String(port), "--config", join(ROOT, "test/fixtures/hardhat.config.js")],
    { cwd: ROOT, env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true" } },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    // Past genesis: readiness calls a node at block 0 "waiting" (it has not found its head), so a
    // check started in the first second would see a node that is not yet a synced one.
    await waitFor("hardhat node past block 0", async () => (BigInt((await jsonRpc(url, "eth_blockNumber")) ?? 0) > 0n ? true : undefined), 60_000);
  } catch (e) {
    await child.stop();
    throw new Error(`${(e as Error).message}\n${child.output()}`);
  }
  return { url, wsUrl: `ws://127.0.0.1:${port}`, port, pid: child.proc.pid!, stop: () => child.stop() };
}
