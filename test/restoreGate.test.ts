/**
 * `restoring` as a readiness state: while the L2 volume is restored from a snapshot, the disk
 * watcher answers the node's check with 503 and how far the restore is, exposes it as metrics,
 * and real HAProxy keeps the chain at 503 with that body; once the restore is done and the node
 * ready, the route opens. The status file is written as rpcstack-restore writes it.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { parseDiskCli, startDiskWatch, type DiskWatch } from "../readiness/diskWatch.js";
import { STAGE_DIR, STATUS_FILE, type RestoreProgress } from "../volumes/restoreStatus.js";
import { haproxyVersion, startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually } from "./support/http.js";
import { stopEach } from "./support/net.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";
import { startSwitch } from "./support/cosmosSim.js";

const KEY = "restore_gate_key_0123456789abcdefghijkLMN";
const volume = mkdtempSync(join(tmpdir(), "rpcstack-restore-gate-"));
let watch: DiskWatch;
let strk: StarknetSim;
let nodeReady: Awaited<ReturnType<typeof startSwitch>>;
let gw: RunningGateway;
let watchUrl: string;

const progress: RestoreProgress = {
  source: "juno-snapshots.nethermind.io/files/mainnet/latest",
  doneBytes: 1_200_000_000,
  totalBytes: 2_000_000_000,
  unpackedBytes: 2_500_000_000,
  bytesPerSecond: 35_000_000,
  etaSeconds: 23,
  startedAt: "2026-11-24T08:00:00.000Z",
  updatedAt: "2026-11-24T08:00:34.000Z",
};
/** As the restore writes it: a temporary file renamed over the status file. */
function writeStatus(p: RestoreProgress) {
  mkdirSync(join(volume, STAGE_DIR), { recursive: true });
  writeFileSync(join(volume, STAGE_DIR, `${STATUS_FILE}.tmp`), JSON.stringify(p));
  renameSync(join(volume, STAGE_DIR, `${STATUS_FILE}.tmp`), join(volume, STAGE_DIR, STATUS_FILE));
}

const relay = () =>
  fetch(`${gw.base}/gateway/strk/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "starknet_blockNumber", params: [] }) });
const relayWithBody = async () => {
  const r = await relay();
  return { status: r.status, body: await r.text() };
};

beforeAll(async () => {
  // The node is held back during a restore: its own check does not answer.
  nodeReady = await startSwitch(503);
  const opts = parseDiskCli(["--volume", `juno=${volume}`, "--check", `l2:juno=${nodeReady.url}`, "--port", "0", "--host", "127.0.0.1", "--interval-seconds", "1"]);
  if (opts === "help") throw new Error("unexpected --help");
  writeStatus(progress);
  watch = startDiskWatch(opts, () => undefined);
  watchUrl = `http://127.0.0.1:${await watch.port}`;
  strk = await startStarknetSim({ from: 5, to: 5 });
  const check = `${watchUrl}/check/l2`;
  const chains: GatewayChain[] = [{ path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: strk.url }, healthUrl: check, statusUrl: check }];
  gw = await startGateway(chains, [{ name: "alice", key: KEY }]);
}, 60_000);

afterAll(async () => {
  await stopEach(gw, strk, nodeReady);
  watch?.stop();
  rmSync(volume, { recursive: true, force: true });
});

describe(`a restoring L2 node behind the gateway (${haproxyVersion()})`, () => {
  it("the watcher's check answers 503 with how far the restore is, and its metrics say the same", async () => {
    const r = await fetch(`${watchUrl}/check/l2`);
    expect(r.status).toBe(503);
    const body = await r.json();
    expect(body.error.code).toBe(-32053);
    expect(body.error.message).toBe("node unavailable: restoring its database from a snapshot: 1.2 GB of 2.0 GB (60.0%), 35.0 MB/s, about 23s left; 2.5 GB written");
    expect(body.error.data).toEqual({ status: "restoring", volume: "juno", restore: progress });
    const metrics = await (await fetch(`${watchUrl}/metrics`)).text();
    expect(metrics).toMatch(/^rpcstack_restore_running\{volume="juno"\} 1$/m);
    expect(metrics).toMatch(/^rpcstack_restore_downloaded_bytes\{volume="juno"\} 1200000000$/m);
    expect(metrics).toMatch(/^rpcstack_restore_archive_bytes\{volume="juno"\} 2000000000$/m);
    expect(metrics).toMatch(/^rpcstack_restore_eta_seconds\{volume="juno"\} 23$/m);
  });

  it("the gateway keeps the chain at 503 with a body that says the node is restoring and how far; then opens once it is done and ready", async () => {
    const down = await eventually("503 while restoring", relayWithBody, (r) => r.status === 503 && r.body.includes("restoring"), 20_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${gw.logs().slice(-3000)}`);
    });
    expect(JSON.parse(down.body).error.message).toMatch(/^node unavailable: restoring its database from a snapshot: 1\.2 GB of 2\.0 GB \(60\.0%\), 35\.0 MB\/s, about 23s left/);
    // Progress moves on: the next answer says so.
    writeStatus({ ...progress, doneBytes: 1_800_000_000, etaSeconds: 5 });
    expect(JSON.parse((await relayWithBody()).body).error.message).toMatch(/1\.8 GB of 2\.0 GB \(90\.0%\).*about 5s left/);
    // Restored (the staging folder is gone), but the node not ready yet: still 503, saying that.
    rmSync(join(volume, STAGE_DIR), { recursive: true, force: true });
    const notReady = await relayWithBody();
    expect(notReady.status).toBe(503);
    expect(JSON.parse(notReady.body).error.message).toBe("node unavailable or not synced (its readiness check answered 503)");
    nodeReady.set(200);
    expect((await eventually("relaying once the node is ready", relay, (r) => r.status === 200, 20_000)).status).toBe(200);
  }, 60_000);
});
