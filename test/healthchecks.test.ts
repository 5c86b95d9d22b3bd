/**
 * The containers' health checks, run for real with the tools the images ship: curl (Juno),
 * BusyBox wget (geth's Alpine image), bash's /dev/tcp (Lighthouse, Pathfinder).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bashHttpGet, curlJsonRpc, wgetJsonRpc } from "../services/health.js";
import type { HealthCheckSpec } from "../services/index.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { freePort } from "./support/net.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";

// geth's image has BusyBox's wget, not GNU wget: put BusyBox's first on PATH.
const bin = mkdtempSync(join(tmpdir(), "rpcstack-busybox-"));
symlinkSync("/usr/bin/busybox", join(bin, "wget"));

/** Runs a Docker HEALTHCHECK test the way Docker does; resolves with the exit code. */
function runCheck(h: HealthCheckSpec): Promise<number | null> {
  const [kind, ...rest] = h.test;
  const [cmd, args] = kind === "CMD-SHELL" ? ["/bin/sh", ["-c", rest[0]]] : [rest[0], rest.slice(1)];
  return new Promise((resolve) => {
    const p = spawn(cmd, args, { env: { PATH: `${bin}:${process.env.PATH}` }, stdio: "ignore" });
    p.on("exit", resolve);
  });
}

let evm: EvmNode;
let sim: StarknetSim;
let statusServer: Server;
let statusPort: number;
let status = 200;
beforeAll(async () => {
  evm = await startHardhat();
  sim = await startStarknetSim({ from: 1, to: 1 });
  statusServer = createServer((req, res) => res.writeHead(req.url === "/eth/v1/node/health" ? status : 404).end());
  await new Promise<void>((r) => statusServer.listen(0, "127.0.0.1", r));
  statusPort = (statusServer.address() as { port: number }).port;
}, 90_000);
afterAll(async () => {
  await evm?.stop();
  await sim?.stop();
  statusServer?.close();
  rmSync(bin, { recursive: true, force: true });
});

describe("health checks mean serving, not just alive", () => {
  it("geth: BusyBox wget POSTs eth_blockNumber and needs a result", async () => {
    expect(await runCheck(wgetJsonRpc(evm.port, "eth_blockNumber", 0))).toBe(0);
    // A server that answers but not with a JSON-RPC result fails the check.
    expect(await runCheck(wgetJsonRpc(statusPort, "eth_blockNumber", 0))).not.toBe(0);
    expect(await runCheck(wgetJsonRpc(await freePort(), "eth_blockNumber", 0))).not.toBe(0);
  });

  it("juno: curl POSTs starknet_chainId and needs a result", async () => {
    const port = Number(new URL(sim.url).port);
    expect(await runCheck(curlJsonRpc(port, "starknet_chainId", 0))).toBe(0);
    expect(await runCheck(curlJsonRpc(port, "starknet_noSuchMethod", 0))).not.toBe(0);
    expect(await runCheck(curlJsonRpc(await freePort(), "starknet_chainId", 0))).not.toBe(0);
  });

  it("lighthouse: bash /dev/tcp GET /eth/v1/node/health accepts 200 and 206, not 503", async () => {
    const check = bashHttpGet(statusPort, "/eth/v1/node/health", [200, 206], 0);
    status = 200;
    expect(await runCheck(check)).toBe(0);
    status = 206;
    expect(await runCheck(check)).toBe(0);
    status = 503;
    expect(await runCheck(check)).not.toBe(0);
    expect(await runCheck(bashHttpGet(await freePort(), "/eth/v1/node/health", [200], 0))).not.toBe(0);
  });
});
