/**
 * The devnet services' command lines, run by real geth (built from its Go module at the pin, as the
 * e2e image has it) and the real Starknet Devnet (built from crates.io at the pin, likewise): they
 * start from exactly what services/ writes (listen addresses moved to loopback, ports to free
 * ones), produce blocks on their own, and rpcstack-ready calls both synced within seconds, as it
 * will in the containers. The indexer follows Devnet.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../config/index.js";
import { planStack } from "../plan/index.js";
import { ROOT, TEST_PROJECT_KEYS, encodeConfigValue, stackFileConfig } from "./harness.js";
import { clientBinary, onLoopback } from "../devtools/clients.js";
import { freePort, jsonRpc, start, waitFor, type Child } from "./support/net.js";

const STANDINS = join(ROOT, "test/support/standins");
const TSX = join(ROOT, "node_modules/.bin/tsx");

const settings = loadConfig({ entries: { ...stackFileConfig("local"), "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS) } });
const specs = planStack(settings);
// Devnet runs one execution client and one L2 node.
const execution = specs.l1.services.execution;
if (!execution) throw new Error("the local stack's L1 role has no execution client");
const byName = { geth: execution, "starknet-devnet": specs.l2.services.node } as const;
const commandOf = (name: keyof typeof byName) => byName[name].command;

let geth: Child;
let devnet: Child;
let l1: string;
let l2: string;
let l2Ws: string;

let gethBinary: string;
let devnetBinary: string;
// Built from their registries when the cache lacks them (.ci/run builds them first): minutes, not the nodes' 30 s.
beforeAll(() => {
  gethBinary = clientBinary("geth");
  devnetBinary = clientBinary("starknet-devnet");
}, 60 * 60_000);

beforeAll(async () => {
  const [http, ws, metrics, rpc] = [await freePort(), await freePort(), await freePort(), await freePort()];
  geth = start(gethBinary, onLoopback(commandOf("geth"), { 8545: http, 8546: ws, 6060: metrics }));
  // The image's entrypoint puts `--host 0.0.0.0` before the command; here the host is loopback.
  devnet = start(devnetBinary, ["--host", "127.0.0.1", ...onLoopback(commandOf("starknet-devnet"), { 5050: rpc })]);
  l1 = `http://127.0.0.1:${http}`;
  l2 = `http://127.0.0.1:${rpc}/rpc`;
  l2Ws = `ws://127.0.0.1:${rpc}/ws`;
  await waitFor("geth --dev", () => jsonRpc(l1, "eth_chainId"));
  await waitFor("Starknet Devnet", () => jsonRpc(l2, "starknet_chainId"));
}, 30_000);
afterAll(async () => {
  await Promise.all([geth?.stop(), devnet?.stop()]);
});

/** A service's Docker health check, run as Docker runs it, against the stand-in's port. */
function healthCheck(name: keyof typeof byName, fromPort: number, toPort: number): number | null {
  const spec = byName[name].healthcheck!;
  expect(spec.test[0]).toBe("CMD-SHELL");
  // Both images are Alpine: BusyBox wget, not GNU wget, first on PATH.
  const bin = mkdtempSync(join(tmpdir(), "rpcstack-busybox-"));
  try {
    symlinkSync("/usr/bin/busybox", join(bin, "wget"));
    const cmd = spec.test[1].replace(`127.0.0.1:${fromPort}/`, `127.0.0.1:${toPort}/`);
    expect(cmd).toContain(`127.0.0.1:${toPort}/`);
    return spawnSync("/bin/sh", ["-c", cmd], { env: { PATH: `${bin}:${process.env.PATH}` }, timeout: 20_000 }).status;
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

describe("devnet nodes on the package's own command lines", () => {
  it("both chains make a block every 2 s, stamped with the clock", async () => {
    const first = [Number.parseInt(await jsonRpc(l1, "eth_blockNumber"), 16), await jsonRpc(l2, "starknet_blockNumber")];
    await new Promise((r) => setTimeout(r, 4_500));
    const later = [Number.parseInt(await jsonRpc(l1, "eth_blockNumber"), 16), await jsonRpc(l2, "starknet_blockNumber")];
    expect(later[0] - first[0]).toBeGreaterThanOrEqual(1);
    expect(later[1] - first[1]).toBeGreaterThanOrEqual(1);
    expect(await jsonRpc(l1, "eth_chainId")).toBe("0x539");
    const head = await jsonRpc(l2, "starknet_getBlockWithTxHashes", ["latest"]);
    expect(Math.abs(head.timestamp - Date.now() / 1000)).toBeLessThan(5);
  });

  it("rpcstack-ready calls both synced within seconds, from the readiness rules alone (Devnet has no readiness endpoint)", () => {
    const t0 = Date.now();
    const r = spawnSync(TSX, [join(ROOT, "readiness/cli.ts"), "--l1", l1, "--l2", l2, "--interval-seconds", "0.5", "--timeout-minutes", "1"], { cwd: ROOT, encoding: "utf8", timeout: 90_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/rpcstack-ready: synced: l1: synced \| eth_syncing is false; block \d+, \d+s old; l2: synced \| starknet_syncing is false; block \d+, \d+s old/);
    expect(Date.now() - t0).toBeLessThan(60_000);
  });

  it("the containers' own health checks (BusyBox wget, JSON-RPC on /) pass against both", () => {
    expect(healthCheck("geth", 8545, Number(new URL(l1).port))).toBe(0);
    expect(healthCheck("starknet-devnet", 5050, Number(new URL(l2).port))).toBe(0);
  });

  it("Starknet Devnet's WebSocket answers JSON-RPC on /ws, as the gateway's wss:// path needs", async () => {
    const { WebSocket } = await import("ws");
    const ws = new WebSocket(l2Ws);
    const reply = await new Promise<any>((resolve, reject) => {
      ws.on("error", reject);
      ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "starknet_blockNumber", params: [] })));
      ws.on("message", (d) => resolve(JSON.parse(d.toString())));
    });
    ws.close();
    expect(reply).toMatchObject({ jsonrpc: "2.0", id: 7, result: expect.any(Number) });
  });

  it("the indexer follows Devnet block by block", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "indexer/indexer.mjs")], {
      env: { PATH: process.env.PATH, L2_RPC_URL: l2, INDEXER_START_BLOCK: "0", INDEXER_MAX_BLOCKS: "2", INDEXER_POLL_SECONDS: "0.2" },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split("\n").map((l) => JSON.parse(l).block)).toEqual([0, 1]);
  });

  it("Starknet Devnet refuses Juno's poll flag, as clap would: it has no such option", () => {
    const r = spawnSync(devnetBinary, ["--host", "127.0.0.1", "--port", "0", "--pending-poll-interval", "3s"], { encoding: "utf8", timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unexpected argument '--pending-poll-interval' found");
  });
});
