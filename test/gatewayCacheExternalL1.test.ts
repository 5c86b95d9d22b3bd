/**
 * The response cache of an external L1 (a hosted node whose URL holds a provider key), on the
 * files the Pulumi Gateway component writes: the program runs under the mock engine, and Debian's
 * real HAProxy runs the gateway container's uploads with only its container paths, listeners and
 * the readiness host moved to this machine.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_LOOPBACK_PORT, GATEWAY_PATHS } from "../services/gateway.js";
import { TEST_PROJECT_KEYS, runProgram, type RecordedResource } from "./harness.js";
import { HAPROXY_LOOPBACK_FLAGS, haproxyBinary } from "./support/haproxy.js";
import { startCountingRelay, type CountingRelay } from "./support/countingRelay.js";
import { listenLoopback } from "./support/http.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { freePort, start, waitFor, type Child } from "./support/net.js";
import { issueCert } from "./support/tls.js";

const SECRET = "extL1Pr0viderK3y9x";
const CONTAINER_DIR = "/usr/local/etc/haproxy/";
let node: EvmNode;
let relay: CountingRelay;
let ready: Server;
let gateway: RecordedResource;
let haproxy: Child | undefined;
let dir: string;
let base: string;

beforeAll(async () => {
  node = await startHardhat();
  relay = await startCountingRelay(node.url);
  const external = { rpcHttp: `${relay.url}/v3/${SECRET}`, rpcWs: `${relay.url.replace("http", "ws")}/ws/v3/${SECRET}` };
  const run = await runProgram({
    stack: "mainnet",
    config: {
      tier: "minimum",
      host: { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32"], diskGB: 1000 },
      gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com" },
    },
    secrets: { projectKeys: TEST_PROJECT_KEYS, l1: { external } },
  });
  if (run.error) throw run.error;
  gateway = run.one("docker:index/container:Container", "rpcstack-gateway-haproxy");

  // The readiness container answers the L1 route's health check (/ready/l1): here, always 200.
  ready = createServer((_req, res) => res.writeHead(200).end("ok"));
  const readyUrl = new URL(await listenLoopback(ready));
  dir = mkdtempSync(join(tmpdir(), "rpcstack-gw-extl1-"));
  const [https, http, metrics, admin] = [await freePort(), await freePort(), await freePort(), await freePort()];
  base = `https://localhost:${https}`;
  const cfgText = gateway.inputs.uploads.find((u: any) => u.file === `${CONTAINER_DIR}haproxy.cfg`).content as string;
  const healthHost = /backend be_eth_health[\s\S]*?server s1 (\S+)/.exec(cfgText)![1];
  const maxconn = /\n    maxconn \d+\n/.exec(cfgText)![0];
  const moves: [string, string][] = [
    [CONTAINER_DIR, `${dir}/`],
    ["/certs/gateway.pem", join(dir, "gateway.pem")],
    [GATEWAY_PATHS.adminSocket, join(dir, "admin.sock")],
    [GATEWAY_PATHS.certSocket, join(dir, "cert.sock")],
    [GATEWAY_PATHS.keyMap, join(dir, "keys.map")],
    [GATEWAY_PATHS.quotaMap, join(dir, "quotas.map")],
    [`127.0.0.1:${ADMIN_LOOPBACK_PORT}`, `127.0.0.1:${admin}`],
    ["0.0.0.0:443", `127.0.0.1:${https}`],
    ["0.0.0.0:80", `127.0.0.1:${http}`],
    ["0.0.0.0:8405", `127.0.0.1:${metrics}`],
    [`server s1 ${healthHost} `, `server s1 ${readyUrl.host} `],
    // The container's file limit is raised for it; this machine's may be lower.
    [maxconn, "\n    maxconn 2000\n"],
    ["\n    user haproxy", ""],
    ["\n    group haproxy", ""],
  ];
  for (const u of gateway.inputs.uploads as { file: string; content: string }[]) {
    const path = u.file.replace(CONTAINER_DIR, `${dir}/`);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, moves.reduce((text, [from, to]) => text.split(from).join(to), u.content));
  }
  writeFileSync(join(dir, "gateway.pem"), issueCert(["localhost"]));
  // The key map the key sync would have put on the gateway's volume.
  const sync = run.one("docker:index/container:Container", "rpcstack-gateway-key-sync");
  writeFileSync(join(dir, "keys.map"), sync.inputs.uploads.find((u: any) => u.file.endsWith("/keys.map")).content);
  // And the quota map (empty: this stack sets no quota), which HAProxy's container starts with.
  writeFileSync(join(dir, "quotas.map"), sync.inputs.uploads.find((u: any) => u.file.endsWith("/quotas.map")).content);
  const cfg = join(dir, "haproxy.cfg");
  execFileSync(haproxyBinary(), ["-c", "-q", "-f", cfg], { stdio: "pipe" });
  const env = Object.fromEntries((gateway.inputs.envs as string[]).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
  haproxy = start(haproxyBinary(), [...HAPROXY_LOOPBACK_FLAGS, "-f", cfg], { env: { ...process.env, ...env } });
  const child = haproxy;
  await waitFor("haproxy", () => new Promise<boolean | undefined>((resolve, reject) => {
    if (child.proc.exitCode !== null) return reject(new Error(`haproxy exited with ${child.proc.exitCode}: ${child.output()}`));
    const s = connect(https, "127.0.0.1", () => (s.destroy(), resolve(true)));
    s.on("error", () => resolve(undefined));
  }), 30_000);
  // The L1 route opens once its health check passed.
  await waitFor("the L1 route", async () => ((await post(call("eth_blockNumber", []))).status === 200 ? true : undefined), 20_000);
}, 120_000);

afterAll(async () => {
  await haproxy?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((r) => (ready ? ready.close(() => r()) : r()));
  await relay?.stop();
  await node?.stop();
});

const call = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const post = (body: string) =>
  fetch(`${base}/gateway/eth/rpc-http/${TEST_PROJECT_KEYS[0].key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const direct = async (body: string) => (await fetch(node.url, { method: "POST", headers: { "Content-Type": "application/json" }, body })).text();

describe("an external L1 with the cache on (the default), on the component's own files", () => {
  it("cacheable L1 calls get the node's answer, fetched from the secret URL, and are then held", async () => {
    // The cache polls the node's final block at the same URL before it holds a block by number.
    await waitFor("a finality poll at the L1's URL", async () => (relay.polls() > 1 ? true : undefined), 10_000);
    for (const body of [call("eth_getBlockByNumber", ["0x1", false]), call("eth_chainId", [])]) {
      const before = relay.calls.length;
      const first = await post(body);
      expect(first.status, body).toBe(200);
      expect(await first.text(), body).toBe(await direct(body));
      expect(first.headers.get("x-cache")).toBe("MISS");
      const again = await post(body);
      expect(again.headers.get("x-cache"), body).toBe("HIT");
      expect(await again.text(), body).toBe(await direct(body));
      expect(relay.calls.length - before, body).toBe(1);
    }
  });

  it("the URL's provider key is in no clear-text upload and in no log line", async () => {
    (gateway.inputs.uploads as { content: string }[]).forEach((u, i) => {
      if (u.content.includes(SECRET)) expect(gateway.secretInputs, `uploads.${i}`).toContain(`uploads.${i}.content`);
    });
    expect(haproxy!.output()).toContain("chain=eth");
    expect(haproxy!.output()).not.toContain(SECRET);
  });
});
