import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSource } from "../components/bundle.js";
import { parseReadinessLogs } from "../components/syncReadiness.js";
import { RESULT_PREFIX } from "../readiness/cli.js";
import { runProgram } from "./harness.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { startStarknetSim } from "./support/starknetSim.js";

const CONTAINER = "docker:index/container:Container";

describe("SyncReadiness under the mock engine", () => {
  it("runs after every node container, on the private network, with the stack's rules", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const check = run.one(CONTAINER, "rpcstack-readiness-sync-check");
    const nodeUrns = run.byType(CONTAINER).filter((c) => /L1Node|L2Node/.test(c.parent ?? "")).map((c) => c.urn);
    expect(nodeUrns.length).toBe(4);
    expect(check.dependencies).toEqual(expect.arrayContaining(nodeUrns));
    // A one-shot runs when created: a replaced node (a new image or flag) replaces the check, so the
    // update waits for sync again (the real engine showed an image change passing without a check).
    const nodeIds = run.byType(CONTAINER).filter((c) => /L1Node|L2Node/.test(c.parent ?? "")).map((c) => `${c.name}-id`);
    expect(check.inputs.labels.map((l: any) => l.label)).toEqual(["rpcstack.replace-when"]);
    expect(check.inputs.labels[0].value.split(",").sort()).toEqual(nodeIds.sort());
    expect(check.inputs.command).toEqual([
      "node", "/readiness/ready.js", "--l1", "http://geth:8545", "--l2", "http://juno:6060/v0_10", "--l2-ready", "http://juno:6060/ready/sync",
      "--tolerance-blocks", "6",
      "--disk", "geth=/volumes/geth", "--disk", "lighthouse=/volumes/lighthouse", "--disk", "juno=/volumes/juno", "--disk-warn-percent", "85", "--disk-stop-percent", "95",
      "--timeout-minutes", "120", "--interval-seconds", "15",
    ]);
    // It reads the data volumes, never writes them; the gateway opens after it, so after the disk watcher.
    expect(check.inputs.volumes.map((v: any) => [v.volumeName, v.containerPath, v.readOnly])).toEqual([
      ["rpcstack-mainnet-geth", "/volumes/geth", true],
      ["rpcstack-mainnet-lighthouse", "/volumes/lighthouse", true],
      ["rpcstack-mainnet-juno", "/volumes/juno", true],
    ]);
    const watcher = run.one(CONTAINER, "rpcstack-readiness-disk-watch");
    expect(check.dependencies).toContain(watcher.urn);
    expect(watcher.inputs.command).toEqual(expect.arrayContaining(["--check", "l1:geth,lighthouse=http://sync-health:8080/ready/l1", "--check", "l2:juno=http://juno:6060/ready/sync", "--stop-percent", "95"]));
    expect(check.inputs.ports).toEqual([]);
    expect(check.inputs.networksAdvanced).toEqual([{ name: "rpcstack", aliases: ["sync-check"] }]);
    expect(check.inputs).toMatchObject({ attach: true, logs: true, mustRun: false });
    expect(check.inputs.uploads[0].file).toBe("/readiness/ready.js");
    expect(check.inputs.uploads[0].content).toContain("starknet_syncing");
    expect(run.byUrn(check.parent!)?.type).toBe("rpcstack:index:SyncReadiness");
    expect(run.outputs.l1SyncState).toEqual({ status: "synced", reason: "mock engine" });
  });

  it("report-only when readiness.wait is false (a local stack on Sepolia), with the reference when set", async () => {
    const run = await runProgram({
      stack: "local",
      config: { network: "testnet", tier: "recommended", readiness: { wait: false, l1ReferenceUrl: "https://eth-sepolia.example.net", toleranceBlocks: 3 } },
    });
    const cmd: string[] = run.one(CONTAINER, "rpcstack-readiness-sync-check").inputs.command;
    expect(cmd).toContain("--report-only");
    expect(cmd).not.toContain("--timeout-minutes");
    expect(cmd.join(" ")).toContain("--tolerance-blocks 3 --l1-reference https://eth-sepolia.example.net");
  });

  it("the live health endpoint stays on the private network, for the gateway", async () => {
    const run = await runProgram({ stack: "testnet", config: { l2: { client: "pathfinder" } } });
    const health = run.one(CONTAINER, "rpcstack-readiness-sync-health");
    expect(health.inputs.command).toEqual(expect.arrayContaining(["--serve", "8080", "--l2", "http://pathfinder:9545/rpc/v0_10"]));
    expect(health.inputs.ports).toEqual([]);
    expect(health.inputs.restart).toBe("unless-stopped");
    expect(health.inputs.networksAdvanced[0].aliases).toEqual(["sync-health"]);
  });

  it("a timed-out wait fails the update with the program's last words", async () => {
    const logs = `[t] l2: syncing | block 5 of 9\nrpcstack-ready: timed out after 120 min before the nodes were synced. Last state: l2: syncing\n${RESULT_PREFIX}{"synced":false}\n`;
    const run = await runProgram({
      stack: "mainnet",
      state: (type, name) => (type === CONTAINER && name === "rpcstack-readiness-sync-check" ? { exitCode: 1, containerLogs: logs } : undefined),
    });
    expect(run.error?.message).toMatch(/nodes were not synced within rpcstack:readiness.timeoutMinutes \(exit 1\)/);
    expect(run.error?.message).toContain("timed out after 120 min");
  });

  it("report-only passes on whatever the nodes say and exports it", async () => {
    const st = { status: "syncing", reason: "block 5 of 9" };
    const run = await runProgram({
      stack: "local",
      config: { readiness: { wait: false } },
      state: (type, name) =>
        type === CONTAINER && name === "rpcstack-readiness-sync-check" ? { exitCode: 0, containerLogs: `${RESULT_PREFIX}${JSON.stringify({ synced: false, l1: st, l2: st })}\n` } : undefined,
    });
    expect(run.error).toBeUndefined();
    expect(run.outputs.l2SyncState).toEqual(st);
  });

  it("parses the last result line and ignores noise", () => {
    expect(parseReadinessLogs(`x\n${RESULT_PREFIX}{"synced":false}\n${RESULT_PREFIX}{"synced":true}\n`)).toEqual({ synced: true });
    expect(parseReadinessLogs("no result")).toBeUndefined();
    expect(parseReadinessLogs(`${RESULT_PREFIX}{broken`)).toBeUndefined();
    expect(parseReadinessLogs(undefined)).toBeUndefined();
  });
});

describe("the bundled program runs with plain Node and no node_modules (as in its container)", () => {
  let evm: EvmNode;
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-bundle-"));
  beforeAll(async () => {
    evm = await startHardhat();
  }, 90_000);
  afterAll(async () => {
    await evm?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("waits for sync against the real EVM node and the simulator, exit 0", async () => {
    const sim = await startStarknetSim({ from: 7, to: 9 });
    try {
      writeFileSync(join(dir, "ready.js"), bundleSource("readiness/cli.ts"));
      // Async: the simulator answers from this process, so it must not be blocked.
      const res = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const p = spawn(process.execPath, [join(dir, "ready.js"), "--l1", evm.url, "--l2", sim.url, "--interval-seconds", "0.2", "--timeout-minutes", "0.5"], {
          cwd: dir,
          env: { PATH: process.env.PATH, NODE_PATH: "" },
        });
        let stdout = "";
        let stderr = "";
        p.stdout.on("data", (d) => (stdout += d));
        p.stderr.on("data", (d) => (stderr += d));
        p.on("close", (status) => resolve({ status, stdout, stderr }));
      });
      expect(res.status, res.stderr + res.stdout).toBe(0);
      expect(parseReadinessLogs(res.stdout)).toMatchObject({ synced: true, l1: { status: "synced" }, l2: { status: "synced" } });
    } finally {
      await sim.stop();
    }
  });
});
