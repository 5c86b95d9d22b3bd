/**
 * The disk never fills unseen: a real filesystem (a 4 MiB tmpfs, mounted as root) filled past each
 * threshold, the watcher's metrics and warning, and real HAProxy taking the node out of rotation
 * through the check the watcher answers for it.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { volumeUse } from "../volumes/space.js";
import { parseDiskCli, startDiskWatch, type DiskWatch } from "../readiness/diskWatch.js";
import { haproxyVersion, startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually } from "./support/http.js";
import { stopEach } from "./support/net.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";
import { startSwitch } from "./support/cosmosSim.js";

const KEY = "disk_test_key_0123456789abcdefghijkLMN";
const dir = mkdtempSync(join(tmpdir(), "rpcstack-disk-"));
let mounted = false;
let watch: DiskWatch;
let strk: StarknetSim;
let nodeReady: Awaited<ReturnType<typeof startSwitch>>;
let gw: RunningGateway;
const logs: string[] = [];

/** Fills the volume to about `percent` of its usable space with one file. */
async function fillTo(percent: number): Promise<number> {
  try {
    unlinkSync(join(dir, "fill"));
  } catch {}
  const empty = await volumeUse("juno", dir);
  const usable = empty.availableBytes / (1 - empty.usedPercent / 100);
  const bytes = Math.max(0, Math.floor((usable * percent) / 100 - (usable - empty.availableBytes)));
  writeFileSync(join(dir, "fill"), Buffer.alloc(bytes, 1));
  return (await watch.measure())[0].usedPercent;
}

const relay = () =>
  fetch(`${gw.base}/gateway/strk/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "starknet_blockNumber", params: [] }) });

beforeAll(async () => {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", dir]);
  mounted = true;
  // The node's own readiness (Juno's /ready/sync in a stack), which the watcher asks while the disk has room.
  nodeReady = await startSwitch(200);
  const opts = parseDiskCli(["--volume", `juno=${dir}`, "--check", `l2:juno=${nodeReady.url}`, "--port", "0", "--host", "127.0.0.1", "--interval-seconds", "1"]);
  if (opts === "help") throw new Error("unexpected --help");
  watch = startDiskWatch(opts, (l) => logs.push(l));
  const port = await watch.port;
  strk = await startStarknetSim({ from: 5, to: 5 });
  const chains: GatewayChain[] = [{ path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: strk.url }, healthUrl: `http://127.0.0.1:${port}/check/l2` }];
  gw = await startGateway(chains, [{ name: "alice", key: KEY }]);
}, 60_000);

afterAll(async () => {
  await stopEach(gw, strk, nodeReady);
  watch?.stop();
  if (mounted) execFileSync("umount", [dir]);
  rmSync(dir, { recursive: true, force: true });
});

describe(`data volume thresholds on a real tmpfs, gateway on ${haproxyVersion()}`, () => {
  it("below 85%: relays, no warning; the gauge says how full", async () => {
    const used = await fillTo(50);
    expect(used).toBeGreaterThan(40);
    expect(used).toBeLessThan(60);
    expect((await eventually("relay", relay, (r) => r.status === 200)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${await watch.port}/metrics`)).text();
    const gauge = Number(/rpcstack_volume_used_ratio\{volume="juno"\} ([0-9.]+)/.exec(metrics)?.[1]);
    expect(gauge).toBeCloseTo(used / 100, 2);
    expect(logs.filter((l) => l.includes("warning"))).toEqual([]);
  });

  it("above 85%: a warning naming the volume, still relaying", async () => {
    const used = await fillTo(90);
    expect(used).toBeGreaterThan(85);
    expect(used).toBeLessThan(95);
    expect(logs.some((l) => /warning: volume juno is 9\d\.\d% full .*above 85%/.test(l))).toBe(true);
    expect((await relay()).status).toBe(200);
  });

  it("rpcstack-ready reports the volume with a warning above 85% that names where the gateway stops", async () => {
    await fillTo(90);
    const args = [join(__dirname, "../readiness/cli.ts"), "--l2", strk.url, "--report-only", "--disk", `juno=${dir}`, "--disk-stop-percent", "97"];
    const out = await new Promise<string>((resolve, reject) =>
      execFile(join(__dirname, "../node_modules/.bin/tsx"), args, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    );
    expect(out).toMatch(/rpcstack-ready: warning: volume juno is 9\d\.\d% full .*above 85%; grow the disk or prune before it reaches 97%/);
  }, 30_000);

  it("above 95%: HAProxy marks the node down (503), and back once space is freed", async () => {
    expect(await fillTo(98)).toBeGreaterThan(95);
    const down = await eventually("gateway gating strk on a full disk", relay, (r) => r.status === 503, 20_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${gw.logs().slice(-3000)}`);
    });
    expect(await down.text()).toMatch(/STRK node unavailable or not synced/);
    expect(logs.some((l) => /volume juno is 9\d\.\d% full .*the gateway stops routing/.test(l))).toBe(true);
    await fillTo(10);
    expect((await eventually("gateway back after freeing space", relay, (r) => r.status === 200, 20_000)).status).toBe(200);
  }, 60_000);

  it("with room on the disk, the node's own check still decides", async () => {
    nodeReady.set(503);
    expect((await eventually("gateway gating strk on its own check", relay, (r) => r.status === 503, 20_000)).status).toBe(503);
    nodeReady.set(200);
    expect((await eventually("gateway back", relay, (r) => r.status === 200, 20_000)).status).toBe(200);
  }, 60_000);
});
