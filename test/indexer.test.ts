import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";
import { freePort } from "./support/net.js";
import { startStarknetSim } from "./support/starknetSim.js";

function runIndexer(env: Record<string, string>, stopOn?: RegExp): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn("sh", ["-c", `exec node ${join(ROOT, "indexer/indexer.mjs")}`], { env: { PATH: process.env.PATH, ...env } });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => {
      err += d;
      if (stopOn?.test(err)) p.kill("SIGTERM");
    });
    const t = setTimeout(() => p.kill("SIGTERM"), 20_000);
    p.on("close", (code) => (clearTimeout(t), resolve({ code, out, err })));
  });
}

describe("the indexer (the guide's /indexer/indexer.sh) against a Starknet node", () => {
  it("prints one line per block and the contract's events", async () => {
    const sim = await startStarknetSim({ from: 40, to: 40 });
    try {
      const { code, out } = await runIndexer({ L2_RPC_URL: sim.url, INDEXER_START_BLOCK: "38", INDEXER_MAX_BLOCKS: "3", INDEXER_POLL_SECONDS: "0.1", INDEXER_CONTRACT: "0x0123" });
      expect(code).toBe(0);
      const lines = out.trim().split("\n").map((l) => JSON.parse(l));
      expect(lines.filter((l) => "transactions" in l).map((l) => l.block)).toEqual([38, 39, 40]);
      expect(lines.filter((l) => "event" in l).map((l) => [l.block, l.event.from_address])).toEqual([[38, "0x0123"], [39, "0x0123"], [40, "0x0123"]]);
      expect(sim.calls.filter((c) => c.method === "starknet_getEvents")).toHaveLength(3);
    } finally {
      await sim.stop();
    }
  });

  it("retries with backoff while the node is down, and refuses to start without L2_RPC_URL", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const down = await runIndexer({ L2_RPC_URL: dead, INDEXER_POLL_SECONDS: "0.05", INDEXER_MAX_BLOCKS: "1" }, /retrying[^]*retrying/);
    // Two failed polls, the second waiting longer, then a prompt exit on SIGTERM.
    const waits = [...down.err.matchAll(/retrying in ([\d.]+)s/g)].map((m) => Number(m[1]));
    expect(waits.length).toBeGreaterThanOrEqual(2);
    expect(waits[1]).toBeGreaterThanOrEqual(waits[0]);
    expect(down.err).toMatch(/indexer: .*fetch failed|ECONNREFUSED/);
    expect(down.code).toBe(0);
    const none = await runIndexer({});
    expect(none.code).toBe(2);
    expect(none.err).toContain("L2_RPC_URL is not set");
  });
});
