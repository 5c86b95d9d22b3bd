import { execFileSync, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleSource } from "../components/bundle.js";
import { GATEWAY_IMAGES, IMAGES } from "../config/networks/images.js";
import { parseSmokeOutput, smokeCommand, smokeVerdict } from "../components/smokeTest.js";
import { certificateReadCommand, withTrustedCertificate } from "../smoke/trust.js";
import type { GatewayChain } from "../gateway/build.js";
import { smokePlan } from "../plan/index.js";
import { type ProgramRun, ROOT, runProgram, TEST_PROJECT_KEYS } from "./harness.js";
import { startCosmosSim, startSwitch, type CosmosSim } from "./support/cosmosSim.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";
import { stopEach } from "./support/net.js";

const KEY = TEST_PROJECT_KEYS[0].key;
const spawnSyncText = (cmd: string, args: string[]) => spawnSync(cmd, args, { encoding: "utf8" }).stdout;
let evm: EvmNode;
let strk: StarknetSim;
let cosmos: CosmosSim;
let strkHealth: Awaited<ReturnType<typeof startSwitch>>;
let gw: RunningGateway;
let chains: GatewayChain[];
const dir = mkdtempSync(join(tmpdir(), "rpcstack-smoke-"));

beforeAll(async () => {
  evm = await startHardhat();
  strk = await startStarknetSim({ from: 812_345, to: 812_345 });
  // A simulator, not the real chain (cosmosChain.test.ts runs one): the smoke relay's requests are counted as they reach the node.
  cosmos = await startCosmosSim();
  strkHealth = await startSwitch(200);
  chains = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: evm.url, rpcWs: evm.wsUrl } },
    { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: strk.url }, healthUrl: strkHealth.url },
    { path: "cosmoshub", chainId: "COSMOSHUB", kind: "cosmos", upstreams: { rpcHttp: cosmos.url, rest: cosmos.url } },
  ];
  gw = await startGateway(chains, TEST_PROJECT_KEYS);
  writeFileSync(join(dir, "smoke.js"), bundleSource("smoke/run.ts"));
}, 120_000);

afterAll(async () => {
  await stopEach(gw, evm, strk, cosmos, strkHealth);
  rmSync(dir, { recursive: true, force: true });
});

/** The bundled smoke test as the SmokeTest component runs it: plain node, script on stdin. */
function smoke(args: string[] = []): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["-", ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS, RPCSTACK_SMOKE_BASE: gw.base, RPCSTACK_SMOKE_KEY: KEY, RPCSTACK_SMOKE_PLAN: JSON.stringify(smokePlan(chains)) },
    });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => resolve({ code, out, err }));
    p.stdin.end(bundleSource("smoke/run.ts"));
  });
}

describe("the smoke test through the real gateway", () => {
  it("one relay per chain and interface with the client library; block numbers out", async () => {
    const { code, out, err } = await smoke();
    expect(code, err).toBe(0);
    const res = parseSmokeOutput(out)!;
    expect(res.failed).toEqual([]);
    const got = Object.fromEntries(res.ok.map((r) => [`${r.chainId} ${r.iface}`, r.block]));
    expect(Object.keys(got).sort()).toEqual(["COSMOSHUB rest", "COSMOSHUB rpc-http", "ETH1 rpc", "ETH1 rpc-http", "STRK rpc-http"]);
    expect(got["STRK rpc-http"]).toBe(812_345);
    expect(got["COSMOSHUB rest"]).toBe(24_000_123);
    expect(got["ETH1 rpc"]).toBeGreaterThanOrEqual(0);
  });

  it("fails naming the chain and interface when a relay fails; --report-only reports and passes", async () => {
    strkHealth.set(503);
    try {
      for (let i = 0; i < 50; i++) {
        const r = await fetch(`${gw.base}/gateway/strk/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"jsonrpc":"2.0","id":1,"method":"starknet_blockNumber"}' });
        await r.arrayBuffer();
        if (r.status === 503) break;
        await new Promise((res) => setTimeout(res, 100));
      }
      const failing = await smoke();
      expect(failing.code).toBe(1);
      expect(failing.err).toMatch(/rpcstack smoke: STRK rpc-http failed: STRK: HTTP 503: STRK node unavailable or not synced/);
      expect(parseSmokeOutput(failing.out)!.ok.length).toBe(4);
      const report = await smoke(["--report-only"]);
      expect(report.code).toBe(0);
      expect(parseSmokeOutput(report.out)!.failed.map((f) => `${f.chainId} ${f.iface}`)).toEqual(["STRK rpc-http"]);
    } finally {
      strkHealth.set(200);
    }
  });
});

const smokeInvoke = (run: ProgramRun) => {
  const found = run.invokes.filter((i) => i.token === "command:local:run" && i.inputs.environment?.RPCSTACK_SMOKE_PLAN);
  expect(found).toHaveLength(1);
  return found[0];
};

describe("SmokeTest and the provider manifest under the mock engine", () => {
  it("runs after the gateway on every update, with the first key as a secret, and exports block numbers (not secret)", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const cmd = smokeInvoke(run);
    expect(cmd.after).toContain("rpcstack-gateway-haproxy");
    // An invoke, not a resource: nothing in the state for the next preview to see as changed.
    expect(run.byType("command:local:Command").map((r) => r.name)).not.toContain("rpcstack-smoke-relays");
    expect(cmd.inputs.environment.RPCSTACK_SMOKE_BASE).toBe("https://rpc.example.com");
    expect(cmd.inputs.environment.RPCSTACK_SMOKE_KEY).toBe(KEY);
    expect(cmd.inputs.command).toBe(smokeCommand("node -"));
    expect(run.secretOutputs).not.toContain("smokeBlockNumbers");
    expect(JSON.parse(cmd.inputs.environment.RPCSTACK_SMOKE_PLAN).map((p: any) => `${p.chainId} ${p.iface}`)).toEqual([
      "ETH1 rpc-http", "ETH1 rpc", "STRK rpc-http", "STRK rpc", "COSMOSHUB rpc-http", "COSMOSHUB rest",
    ]);
    expect(run.outputs.smokeBlockNumbers).toEqual({ ETH1: { "rpc-http": 1, rpc: 1 }, STRK: { "rpc-http": 1, rpc: 1 }, COSMOSHUB: { "rpc-http": 1, rest: 1 } });
  });

  it("the local devnet stack waits for its nodes, so a failed relay fails the update; it trusts exactly its gateway's self-signed certificate", async () => {
    const run = await runProgram({ stack: "local" });
    const cmd = smokeInvoke(run);
    expect(cmd.inputs.command).toBe(smokeCommand(withTrustedCertificate(certificateReadCommand("rpcstack-gateway", "/certs/gateway.pem"), "node -")));
    expect(cmd.inputs.environment.RPCSTACK_SMOKE_BASE).toBe("https://localhost");
    // No certificate check is skipped.
    expect(cmd.inputs.environment).not.toHaveProperty("RPCSTACK_SMOKE_INSECURE_LOCALHOST");
  });

  it("a local stack on Sepolia without readiness.wait reports instead of failing (its nodes may still sync)", async () => {
    const run = await runProgram({ stack: "local", config: { network: "testnet", tier: "recommended", readiness: { wait: false } } });
    const cmd = smokeInvoke(run);
    expect(cmd.inputs.command).toBe(smokeCommand(withTrustedCertificate(certificateReadCommand("rpcstack-gateway", "/certs/gateway.pem"), "node - --report-only")));
    expect(cmd.inputs.environment.RPCSTACK_SMOKE_BASE).toBe("https://localhost");
  });

  it("mainnet manifest: chains, public URLs without keys, tier, client versions, geolocation", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const m = run.outputs.providerManifest as any;
    expect(m).toMatchObject({
      network: "mainnet",
      gateway: "https://rpc.example.com",
      geolocation: "EU",
      tier: { name: "recommended", cores: 4, memoryGiB: 16, diskGB: 2000, bandwidthMbps: 25 },
      clients: { execution: IMAGES.geth, consensus: IMAGES.lighthouse, juno: IMAGES.juno, indexer: IMAGES.indexer, gateway: GATEWAY_IMAGES.haproxy },
    });
    expect(m.chains.map((c: any) => [c.chainId, c.path, c.source])).toEqual([["ETH1", "eth", "own node"], ["STRK", "strk", "own node"], ["COSMOSHUB", "cosmoshub", "relayed upstream"]]);
    expect(m.chains[1].interfaces).toEqual({ "rpc-http": "https://rpc.example.com/gateway/strk/rpc-http/<KEY>", rpc: "wss://rpc.example.com/gateway/strk/rpc/<KEY>?secret=null" });
    expect(m.chains[2].interfaces).toEqual({
      "rpc-http": "https://rpc.example.com/gateway/cosmoshub/rpc-http/<KEY>",
      "tendermint-uri": "https://rpc.example.com/gateway/cosmoshub/rpc-http/<KEY>/status",
      rest: "https://rpc.example.com/gateway/cosmoshub/rest/<KEY>/<rest_path>",
      "tendermint-rpc": "https://cosmoshub-rpc.rpc.example.com",
      "tendermint-ws": "wss://cosmoshub-rpc.rpc.example.com/websocket",
      "rest-host": "https://cosmoshub-rest.rpc.example.com",
      grpc: "cosmoshub-grpc.rpc.example.com:443",
    });
    expect(JSON.stringify(m)).not.toMatch(new RegExp(TEST_PROJECT_KEYS.map((k) => k.key).join("|")));
  });

  it("testnet manifest: Sepolia chain ids and the recommended tier (a Sepolia L1 does not fit the minimum)", async () => {
    const run = await runProgram({ stack: "testnet", config: { l2: { client: "pathfinder" } } });
    const m = run.outputs.providerManifest as any;
    expect(m.network).toBe("testnet");
    expect(m.geolocation).toBeNull();
    expect(m.tier.name).toBe("recommended");
    expect(m.chains.map((c: any) => c.chainId)).toEqual(["SEP1", "STRKS"]);
    expect(m.clients.pathfinder).toBe(IMAGES.pathfinder);
    expect(m.gateway).toBe("https://rpc-testnet.example.com");
  });
});

describe("a gateway without a domain (self-signed): the relays trust exactly its certificate", () => {
  const tmp = mkdtempSync(join(tmpdir(), "rpcstack-selfsigned-"));
  let server: Server;
  let port: number;
  afterAll(() => {
    server?.close();
    rmSync(tmp, { recursive: true, force: true });
  });
  beforeAll(async () => {
    // The certificate as cert-init writes it (certificate and key in one PEM), served over TLS.
    execFileSync("python3", [join(ROOT, "gateway/acme/selfsigned.py"), join(tmp, "gateway.pem"), "localhost"]);
    const pem = readFileSync(join(tmp, "gateway.pem"));
    server = createServer({ cert: pem, key: pem }, (_req, res) => res.end("relayed")).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    port = (server.address() as AddressInfo).port;
    // `docker exec CONTAINER CMD...` run here, so the package's own read command runs as written.
    writeFileSync(join(tmp, "docker"), '#!/bin/sh\n[ "$1" = exec ] && shift 2 && exec "$@"\nexit 99\n', { mode: 0o755 });
  });
  const fetchFrom = (host: string) => `node -e 'fetch("https://${host}:${port}/").then((r) => r.text()).then((t) => process.stdout.write(t))'`;
  // Asynchronous: the TLS server runs in this process.
  const sh = (cmd: string) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const p = spawn("/bin/sh", ["-c", cmd], { env: { PATH: `${tmp}:${process.env.PATH}` }, timeout: 30_000 });
      let stdout = "";
      let stderr = "";
      p.stdout.on("data", (d) => (stdout += d));
      p.stderr.on("data", (d) => (stderr += d));
      p.on("close", (status) => resolve({ status, stdout, stderr }));
    });

  it("reads the certificate blocks only: the private key beside them never leaves the container", async () => {
    const r = await sh(certificateReadCommand("rpcstack-gateway", join(tmp, "gateway.pem")));
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\n$/);
    expect(r.stdout).not.toContain("PRIVATE KEY");
  });

  it("over ssh: the read command survives the server's shell, which gets the remote words as one string", async () => {
    // ssh joins its remote words with spaces and the server's shell parses that string again.
    writeFileSync(join(tmp, "ssh"), '#!/bin/sh\nwhile [ "$1" != "${1#-}" ]; do case "$1" in -n) shift;; *) shift 2;; esac; done\nshift\nexec sh -c "$*"\n', { mode: 0o755 });
    const r = await sh(certificateReadCommand("rpcstack-gateway", join(tmp, "gateway.pem"), { user: "ops", address: "127.0.0.1", port: 22 }));
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\n$/);
  });

  it("a relay trusting the certificate passes (its names are checked as usual); without it, it is refused", async () => {
    const read = certificateReadCommand("rpcstack-gateway", join(tmp, "gateway.pem"));
    // 127.0.0.1 is on every certificate cert-init makes, beside the stack's own name.
    const ok = await sh(withTrustedCertificate(read, fetchFrom("127.0.0.1")));
    expect(ok.stdout, ok.stderr).toBe("relayed");
    const untrusted = await sh(fetchFrom("127.0.0.1"));
    expect(untrusted.status).not.toBe(0);
    expect(untrusted.stderr).toMatch(/self[- ]signed certificate/i);
    // Nothing read (a gateway not up yet): said so, and no relay is made.
    const none = await sh(withTrustedCertificate("true", fetchFrom("127.0.0.1")));
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("rpcstack smoke: no certificate read from the gateway");
  });

  it("a server's address becomes an IP name on the certificate (devnet on an ssh host reached by its IP)", () => {
    execFileSync("python3", [join(ROOT, "gateway/acme/selfsigned.py"), join(tmp, "ip.pem"), "192.0.2.7"]);
    const text = execFileSync("openssl", ["x509", "-noout", "-ext", "subjectAltName", "-in", join(tmp, "ip.pem")], { encoding: "utf8" });
    expect(text).toContain("IP Address:192.0.2.7");
    expect(text).not.toContain("DNS:192.0.2.7");
  });
});

describe("what the smoke relays' output means for the update", () => {
  const sh = (cmd: string) => spawnSyncText("/bin/sh", ["-c", smokeCommand(cmd)]);
  it("their error output and exit status reach the program (an invoke's own error says only 'exit status 1'), and fail the update naming them", () => {
    const out = sh("echo 'ssh: connect to host 203.0.113.10 port 22: Connection refused' >&2; exit 255");
    expect(out).toContain("RPCSTACK_SMOKE_EXIT=255");
    const v = smokeVerdict(out, false);
    expect(v.error).toBe("rpcstack: the smoke test through the gateway did not run (exit 255):\nssh: connect to host 203.0.113.10 port 22: Connection refused");
  });

  it("a failed relay fails the update naming the chain and interface; report-only keeps it as a result", () => {
    const result = { ok: [{ chainId: "ETH1", iface: "rpc-http", block: 7 }], failed: [{ chainId: "STRK", iface: "rpc", error: "HTTP 503: node unavailable or not synced" }] };
    const out = sh(`echo 'RPCSTACK_SMOKE ${JSON.stringify(result)}'; echo 'rpcstack smoke: STRK rpc failed' >&2; exit 1`);
    expect(smokeVerdict(out, false).error).toBe("rpcstack: the smoke test through the gateway failed: STRK rpc: HTTP 503: node unavailable or not synced");
    expect(smokeVerdict(out, true)).toEqual({ result });
  });

  it("relays that all passed are the result, nothing more", () => {
    const result = { ok: [{ chainId: "ETH1", iface: "rpc-http", block: 7 }], failed: [] };
    expect(smokeVerdict(sh(`echo 'RPCSTACK_SMOKE ${JSON.stringify(result)}'`), false)).toEqual({ result });
  });
});
