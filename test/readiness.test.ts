import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESULT_PREFIX } from "../readiness/cli.js";
import { ROOT } from "./harness.js";
import { hardhatForTests } from "./support/hardhat.js";
import { freePort, start } from "./support/net.js";
import { startStarknetSim } from "./support/starknetSim.js";

const TSX = join(ROOT, "node_modules/.bin/tsx");

/** Runs `rpcstack-ready` as a real process; resolves with its exit code and output. */
function ready(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(TSX, [join(ROOT, "readiness/cli.ts"), ...args], { cwd: ROOT });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => {
      p.kill("SIGKILL");
      reject(new Error(`rpcstack-ready did not exit within ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    p.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const result = (out: string) => JSON.parse(out.split("\n").find((l) => l.startsWith(RESULT_PREFIX))!.slice(RESULT_PREFIX.length));

const evm = hardhatForTests();

describe("rpcstack-ready against a real EVM node and a Starknet simulator", () => {
  it("waits while L2 walks from syncing to synced, printing progress, then exits 0", async () => {
    const sim = await startStarknetSim({ from: 1000, to: 1004, hex: true });
    try {
      const { code, out } = await ready(["--l1", evm().url, "--l2", sim.url, "--interval-seconds", "0.2", "--timeout-minutes", "1"]);
      expect(code).toBe(0);
      const lines = out.split("\n").filter((l) => l.startsWith("["));
      // Progress per poll: L2 block numbers climb, then it is synced.
      expect(lines.some((l) => /l2: syncing \| block 1000 of 1004/.test(l))).toBe(true);
      expect(lines.some((l) => /l2: syncing \| block 1002 of 1004 \| 99\.\d%/.test(l))).toBe(true);
      expect(lines.at(-1)).toMatch(/l1: synced \| eth_syncing is false; block \d+, \d+s old/);
      expect(lines.at(-1)).toMatch(/l2: synced/);
      const final = result(out);
      expect(final.synced).toBe(true);
      expect(final.l1.status).toBe("synced");
      expect(final.l2.status).toBe("synced");
      expect(final.l2.reason).toMatch(/^starknet_syncing is false; block 1004, \d+s old$/);
      expect(sim.calls.filter((c) => c.method === "starknet_syncing").length).toBeGreaterThanOrEqual(5);
    } finally {
      await sim.stop();
    }
  });

  it("an empty Starknet node whose starknet_syncing says false is never synced (exit 1, waiting)", async () => {
    const sim = await startStarknetSim({ from: 0, to: 0, emptyChain: true });
    try {
      const { code, out } = await ready(["--l2", sim.url, "--interval-seconds", "0.1", "--timeout-minutes", "0.01"]);
      expect(code).toBe(1);
      expect(out).toMatch(/l2: waiting \| starknet_syncing is false but the node has no block yet/);
      expect(sim.calls.map((c) => c.method)).toContain("starknet_getBlockWithTxHashes");
    } finally {
      await sim.stop();
    }
  });

  it("--l2-ready: the node's own readiness endpoint decides once starknet_syncing is false", async () => {
    const sim = await startStarknetSim({ from: 1, to: 3 });
    try {
      const { code, out } = await ready(["--l2", sim.url, "--l2-ready", `${sim.url}/ready/sync`, "--interval-seconds", "0.1", "--timeout-minutes", "0.5"]);
      expect(code).toBe(0);
      expect(result(out).l2.reason).toBe("starknet_syncing is false and the node's own readiness check answers 200");
    } finally {
      await sim.stop();
    }
  });

  it("compares the L1 head with a reference node: within tolerance is synced", async () => {
    const { code, out } = await ready(["--l1", evm().url, "--l1-reference", evm().url, "--tolerance-blocks", "2", "--interval-seconds", "0.2", "--timeout-minutes", "0.5"]);
    expect(code).toBe(0);
    expect(result(out).l1.reason).toMatch(/reference at \d+ \(tolerance 2\)/);
  });

  it("times out with the last state when a node stays behind (exit 1)", async () => {
    const sim = await startStarknetSim({ from: 10, to: 10_000, step: 1 });
    try {
      const { code, out } = await ready(["--l1", evm().url, "--l2", sim.url, "--interval-seconds", "0.2", "--timeout-minutes", "0.03"]);
      expect(code).toBe(1);
      expect(out).toMatch(/timed out after 0\.03 min before the nodes were synced\. Last state: .*l2: syncing \| block \d+ of 10000/);
      expect(result(out).synced).toBe(false);
    } finally {
      await sim.stop();
    }
  });

  it("an unreachable endpoint gives up with a clear message (exit 3)", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const { code, out } = await ready(["--l2", dead, "--interval-seconds", "0.1", "--timeout-minutes", "0.02"]);
    expect(code).toBe(3);
    expect(out).toMatch(new RegExp(`gave up after 0\\.02 min: l2 unreachable\\. Last state: l2: unknown \\| starknet_syncing: ${dead.replace(/\./g, "\\.")} unreachable \\(ECONNREFUSED\\)`));
  });

  it("a malformed reply is never taken for synced", async () => {
    const sim = await startStarknetSim({ from: 1, to: 1, syncingOverride: { current_block_num: "soon" } });
    try {
      const { code, out } = await ready(["--l2", sim.url, "--interval-seconds", "0.1", "--timeout-minutes", "0.01"]);
      expect(code).toBe(1);
      expect(out).toMatch(/l2: unknown \| starknet_syncing has no usable current_block_num \("soon"\)/);
    } finally {
      await sim.stop();
    }
  });

  it("--report-only polls once and exits 0 whatever the state", async () => {
    const sim = await startStarknetSim({ from: 1, to: 50 });
    try {
      const { code, out } = await ready(["--l2", sim.url, "--report-only"]);
      expect(code).toBe(0);
      expect(result(out)).toMatchObject({ synced: false, l2: { status: "syncing" } });
    } finally {
      await sim.stop();
    }
  });

  it("bad arguments exit 2 with the option named", async () => {
    const { code, err } = await ready(["--l1", "geth:8545"]);
    expect(code).toBe(2);
    expect(err).toContain('--l1 must be an http:// or https:// URL (got "geth:8545")');
    const unknown = await ready(["--l2", "http://127.0.0.1:1", "--fast"]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain("Unknown option '--fast'");
    const crossed = await ready(["--l2", "http://127.0.0.1:1", "--disk-warn-percent", "96", "--disk-stop-percent", "90"]);
    expect(crossed.code).toBe(2);
    expect(crossed.err).toContain("--disk-warn-percent must not be above --disk-stop-percent");
  });

  it("--help prints the usage on stdout and exits 0", async () => {
    const { code, out, err } = await ready(["--help"]);
    expect(code).toBe(0);
    expect(out).toContain("usage: rpcstack-ready");
    expect(out).toContain("--l2-ready [NODE=]URL");
    expect(err).toBe("");
  });
});

describe("rpcstack-ready --serve (live gating for the gateway)", () => {
  it("answers 200 while synced and 503 with the reason while behind", async () => {
    const sim = await startStarknetSim({ from: 1, to: 3 });
    const port = await freePort();
    const child = start(TSX, [join(ROOT, "readiness/cli.ts"), "--l1", evm().url, "--l2", sim.url, "--serve", String(port), "--serve-host", "127.0.0.1", "--interval-seconds", "0.2"], { cwd: ROOT });
    try {
      const get = async (path: string) => {
        const r = await fetch(`http://127.0.0.1:${port}${path}`);
        return { status: r.status, body: await r.json(), type: r.headers.get("content-type") };
      };
      // Poll until L1 is synced (hardhat mines a block every second).
      let l1 = { status: 0, body: {} as any, type: "" as string | null };
      for (let i = 0; i < 100 && l1.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 200));
        l1 = await get("/ready/l1").catch(() => l1);
      }
      expect(l1.status).toBe(200);
      expect(l1.type).toBe("application/json");
      expect(l1.body.l1.status).toBe("synced");
      let l2 = await get("/ready/l2");
      for (let i = 0; i < 100 && l2.status !== 200; i++) {
        if (l2.status === 503) expect(["syncing", "unknown"]).toContain(l2.body.l2.status);
        await new Promise((r) => setTimeout(r, 100));
        l2 = await get("/ready/l2");
      }
      expect(l2.status).toBe(200);
      expect((await get("/ready")).status).toBe(200);
      // Live mode follows the chain: the L1 head it reports moves as hardhat mines.
      const before = l1.body.l1.progress.current;
      await new Promise((r) => setTimeout(r, 1500));
      expect((await get("/ready/l1")).body.l1.progress.current).toBeGreaterThan(before);
      expect((await get("/nope")).status).toBe(404);
      // The L2 node goes away: the check turns 503 and says why.
      await sim.stop();
      let down = await get("/ready/l2");
      for (let i = 0; i < 100 && down.status !== 503; i++) {
        await new Promise((r) => setTimeout(r, 100));
        down = await get("/ready/l2");
      }
      expect(down.status).toBe(503);
      expect(down.body.l2.reason).toMatch(/unreachable/);
    } finally {
      await child.stop();
      await sim.stop().catch(() => {});
    }
  });
});
