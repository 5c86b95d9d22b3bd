/**
 * The devnet network under the mock engine: the `local` stack deploys geth --dev and Starknet
 * Devnet, the indexer, the readiness gate, the gateway and the smoke test, on a machine with
 * 50 GB free; config refuses what does not fit a trial chain.
 */
import { describe, expect, it, vi } from "vitest";
import { ConfigError, DEVNET_IMAGES, IMAGES, NETWORKS, loadConfig, publicHost } from "../config/index.js";
import { smokeCommand } from "../components/smokeTest.js";
import { certificateReadCommand, withTrustedCertificate } from "../smoke/trust.js";
import { TEST_PROJECT_KEYS, TEST_SSH_PRIVATE_KEY, encodeConfigValue, runProgram, type ProgramRun } from "./harness.js";

const CONTAINER = "docker:index/container:Container";
const GiB_KiB = 1024 * 1024;
// What a laptop has: 4 cores, 8 GB, 50 GB free where Docker keeps its data.
const LAPTOP = { cores: 4, memory_kib: 8 * GiB_KiB, disk_free_kib: 50 * GiB_KiB };

const container = (run: ProgramRun, name: string) => run.one(CONTAINER, name);
const names = (run: ProgramRun) => run.byType(CONTAINER).map((c) => c.name).sort();
const published = (run: ProgramRun, name: string) =>
  (container(run, name).inputs.ports ?? []).map((p: any) => `${p.ip}:${p.external}->${p.internal}/${p.protocol}`).sort();

async function deployLocal(): Promise<{ run: ProgramRun; said: string[] }> {
  const said: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...xs: unknown[]) => void said.push(xs.join(" ")));
  const spyWarn = vi.spyOn(console, "warn").mockImplementation((...xs: unknown[]) => void said.push(xs.join(" ")));
  try {
    return { run: await runProgram({ stack: "local", hostFacts: LAPTOP }), said };
  } finally {
    spy.mockRestore();
    spyWarn.mockRestore();
  }
}

describe("the local stack runs the devnet network", () => {
  it("deploys geth --dev, Starknet Devnet, the indexer, readiness, gateway and smoke test with no tier failure on 50 GB", async () => {
    const { run } = await deployLocal();
    expect(run.error).toBeUndefined();
    expect(run.outputs.network).toBe("devnet");
    expect(names(run)).toEqual([
      "rpcstack-gateway-cert-init",
      "rpcstack-gateway-haproxy",
      "rpcstack-gateway-key-sync",
      "rpcstack-gateway-usage",
      "rpcstack-indexer-indexer",
      "rpcstack-l1-geth",
      "rpcstack-l2-starknet-devnet",
      "rpcstack-readiness-sync-check",
      "rpcstack-readiness-sync-health",
    ]);
    // No consensus client, JWT or chain-data volume: geth --dev and Devnet keep their chains in memory.
    expect(run.byType("docker:index/volume:Volume").map((v) => v.inputs.name)).toEqual(["rpcstack-gateway-certs", "rpcstack-gateway-run", "rpcstack-gateway-keys", "rpcstack-gateway-usage"]);
    expect(run.invokes.filter((i) => i.inputs.environment?.RPCSTACK_SMOKE_PLAN)).toHaveLength(1);
    expect(run.outputs.smokeBlockNumbers).toEqual({ ETHDEV: { "rpc-http": 1, rpc: 1 }, STRKDEV: { "rpc-http": 1, rpc: 1 } });
  });

  it("geth --dev seals a block every 2 s and serves eth/net/web3 over HTTP and WS on loopback only", async () => {
    const { run } = await deployLocal();
    const geth = container(run, "rpcstack-l1-geth");
    expect(geth.inputs.image).toBe(IMAGES.geth);
    const args: string[] = geth.inputs.command;
    expect(args.slice(0, 2)).toEqual(["--dev", "--dev.period=2"]);
    expect(args).toEqual(expect.arrayContaining(["--http", "--http.addr=0.0.0.0", "--http.api=eth,net,web3", "--ws", "--ws.addr=0.0.0.0", "--ws.api=eth,net,web3"]));
    expect(args.join(" ")).not.toMatch(/--sepolia|--mainnet|authrpc|datadir|admin|debug|personal/);
    expect(published(run, "rpcstack-l1-geth")).toEqual(["127.0.0.1:8545->8545/tcp", "127.0.0.1:8546->8546/tcp"]);
    expect(geth.inputs.healthcheck.tests.join(" ")).toContain('"method":"eth_blockNumber"');
    expect(geth.inputs.volumes).toEqual([]);
  });

  it("Starknet Devnet: pinned release, a block every 2 s, RPC on loopback, healthy when it answers JSON-RPC", async () => {
    const { run } = await deployLocal();
    const sd = container(run, "rpcstack-l2-starknet-devnet");
    expect(sd.inputs.image).toBe(DEVNET_IMAGES.starknetDevnet);
    expect(sd.inputs.image).toMatch(/^shardlabs\/starknet-devnet-rs:\d+\.\d+\.\d+$/);
    // The image's entrypoint (tini -- starknet-devnet --host 0.0.0.0) is kept; only options follow.
    expect(sd.inputs.entrypoints).toBeUndefined();
    expect(sd.inputs.command).toEqual(["--port=5050", "--block-generation-on=2", "--seed=0"]);
    expect(sd.inputs.command.join(" ")).not.toMatch(/poll-interval/);
    expect(published(run, "rpcstack-l2-starknet-devnet")).toEqual(["127.0.0.1:5050->5050/tcp"]);
    expect(sd.inputs.healthcheck.tests.join(" ")).toMatch(/wget .*"method":"starknet_chainId".*127\.0\.0\.1:5050/);
    expect(sd.inputs.wait).toBe(true);
  });

  it("the indexer follows Devnet; readiness polls both chains by their heads (Devnet has no readiness endpoint of its own)", async () => {
    const { run } = await deployLocal();
    expect(container(run, "rpcstack-indexer-indexer").inputs.envs).toContain("L2_RPC_URL=http://starknet-devnet:5050/rpc");
    const check: string[] = container(run, "rpcstack-readiness-sync-check").inputs.command;
    expect(check).toEqual(expect.arrayContaining(["--l1", "http://geth:8545", "--l2", "http://starknet-devnet:5050/rpc", "--timeout-minutes", "5"]));
    expect(check).not.toContain("--l2-ready");
    expect(check).not.toContain("--report-only");
    expect(container(run, "rpcstack-readiness-sync-health").inputs.command).not.toContain("--l2-ready");
  });

  it("the gateway serves the same paths for ETHDEV and STRKDEV, gated by the live readiness checks, with a self-signed certificate", async () => {
    const { run } = await deployLocal();
    const gw = container(run, "rpcstack-gateway-haproxy");
    const cfg: string = gw.inputs.uploads.find((u: any) => u.file.endsWith("haproxy.cfg")).content;
    expect(cfg).toContain("starknet-devnet:5050");
    expect(cfg).toContain("geth:8545");
    expect(cfg).toContain("/ready/l2");
    expect(cfg).toContain("/ready/l1");
    expect(container(run, "rpcstack-gateway-cert-init").inputs.command).toEqual(["/acme/selfsigned.py", "/certs/gateway.pem", "localhost"]);
    const endpoints = run.outputs.endpoints as Record<string, { chainId: string; endpoints: Record<string, string> }>;
    expect(endpoints.ethdev).toEqual({ chainId: "ETHDEV", endpoints: { rpcHttp: "https://localhost/gateway/ethdev/rpc-http/<KEY>", rpcWs: "wss://localhost/gateway/ethdev/rpc/<KEY>?secret=null" } });
    expect(endpoints.strkdev.endpoints.rpcHttp).toBe("https://localhost/gateway/strkdev/rpc-http/<KEY>");
    const [smoke] = run.invokes.filter((i) => i.inputs.environment?.RPCSTACK_SMOKE_PLAN);
    expect(smoke.inputs.environment.RPCSTACK_SMOKE_BASE).toBe("https://localhost");
    expect(smoke.inputs.command).toBe(smokeCommand(withTrustedCertificate(certificateReadCommand("rpcstack-gateway", "/certs/gateway.pem"), "node -")));
  });

  it("pulumi up warns that devnet is not a public network; the manifest lists no consensus client", async () => {
    const { run, said } = await deployLocal();
    expect(said.filter((l) => l.startsWith("warning:") && l.includes("network devnet is a private trial chain") && l.includes("NOT Ethereum, Sepolia or Starknet"))).toHaveLength(1);
    const manifest = run.outputs.providerManifest as { network: string; clients: Record<string, string>; tier: { name: string; diskGB: number } };
    expect(manifest.network).toBe("devnet");
    expect(manifest.clients).not.toHaveProperty("consensus");
    expect(manifest.clients["starknet-devnet"]).toBe(DEVNET_IMAGES.starknetDevnet);
    expect(manifest.tier).toMatchObject({ name: "devnet", diskGB: NETWORKS.devnet.dev!.requirements.diskGB });
  });

  it("a local stack on Sepolia stays possible with network testnet (and a tier)", async () => {
    const run = await runProgram({ stack: "local", config: { network: "testnet", tier: "recommended", l2: { client: "juno", pendingPollInterval: "3s" } } });
    expect(run.error).toBeUndefined();
    expect(names(run)).toEqual(expect.arrayContaining(["rpcstack-l1-lighthouse", "rpcstack-l1-jwt-init", "rpcstack-l2-juno"]));
    expect(container(run, "rpcstack-l1-geth").inputs.command[0]).toBe("--sepolia");
  });
});

describe("devnet on an ssh host (a rehearsal on a server) under the mock engine", () => {
  it("deploys over ssh:// with a self-signed certificate for the server's address, which the smoke relays read over ssh and trust", async () => {
    const host = { kind: "ssh", address: "203.0.113.10", user: "ops", port: 2222 };
    const run = await runProgram({ stack: "local", config: { host }, secrets: { projectKeys: TEST_PROJECT_KEYS, sshPrivateKey: TEST_SSH_PRIVATE_KEY } });
    expect(run.error).toBeUndefined();
    expect(run.one("pulumi:providers:docker").inputs.host).toBe("ssh://ops@203.0.113.10:2222");
    const certInit = run.one("docker:index/container:Container", "rpcstack-gateway-cert-init");
    expect(certInit.inputs.command).toEqual(["/acme/selfsigned.py", "/certs/gateway.pem", "203.0.113.10"]);
    const endpoints = run.outputs.endpoints as Record<string, { endpoints: Record<string, string> }>;
    expect(endpoints.strkdev.endpoints.rpcHttp).toBe("https://203.0.113.10/gateway/strkdev/rpc-http/<KEY>");
    const [smoke] = run.invokes.filter((i) => i.inputs.environment?.RPCSTACK_SMOKE_PLAN);
    const read = certificateReadCommand("rpcstack-gateway", "/certs/gateway.pem", { user: "ops", address: "203.0.113.10", port: 2222 });
    expect(read.startsWith("'ssh' '-n' '-o' 'BatchMode=yes' '-o' 'StrictHostKeyChecking=accept-new' '-p' '2222' 'ops@203.0.113.10' ")).toBe(true);
    expect(smoke.inputs.command).toBe(smokeCommand(withTrustedCertificate(read, "node -")));
    expect(smoke.inputs.environment.RPCSTACK_SMOKE_BASE).toBe("https://203.0.113.10");
  });
});

describe("config refuses what does not fit devnet, naming the key", () => {
  const devnet = (extra: Record<string, unknown> = {}) => ({ network: "devnet", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, ...extra });
  const problems = (raw: Record<string, unknown>) => {
    const entries = Object.fromEntries(Object.entries(raw).map(([k, v]) => [`rpcstack:${k}`, encodeConfigValue(v)]));
    try {
      loadConfig({ entries, isSecret: (k) => k === "projectKeys" });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as ConfigError).problems;
    }
    throw new Error("config was accepted");
  };

  it("accepts the bare devnet config, with the trial's own requirements instead of a tier", () => {
    const entries = Object.fromEntries(Object.entries(devnet()).map(([k, v]) => [`rpcstack:${k}`, encodeConfigValue(v)]));
    const c = loadConfig({ entries, isSecret: (k) => k === "projectKeys" });
    expect(c.tier).toEqual(NETWORKS.devnet.dev!.requirements);
    expect(c.l2).toEqual({ client: "starknet-devnet", image: DEVNET_IMAGES.starknetDevnet, release: "v0.8.1", pendingPollInterval: "3s", rpcVersion: "v0_10", specVersions: { v0_10: { http: "/rpc", ws: "/ws" } } });
    expect(c.l1.consensusImage).toBeUndefined();
  });

  it.each([
    ["Juno's poll interval", { l2: { pendingPollInterval: "3s" } }, /^rpcstack:l2\.pendingPollInterval: applies to Juno only: Starknet Devnet makes its own blocks/],
    ["Juno as the L2 client", { l2: { client: "juno" } }, /^rpcstack:l2\.client: juno does not run on network devnet, whose L2 is Starknet Devnet .*set rpcstack:network to testnet/],
    ["Pathfinder as the L2 client", { l2: { client: "pathfinder" } }, /^rpcstack:l2\.client: pathfinder does not run on network devnet/],
    ["a spec version Starknet Devnet does not serve", { l2: { rpcVersion: "v0_9" } }, /^rpcstack:l2\.rpcVersion: v0_9 is not served by starknet-devnet \(Starknet Devnet v0\.8\.1, which serves v0_10\)$/],
    ["a hardware tier", { tier: "minimum" }, /^rpcstack:tier: does not apply to network devnet, which needs 2 cores, 2 GB of memory and 10 GB free/],
    ["a consensus client", { l1: { consensusImage: "sigp/lighthouse:v8.0.0" } }, /^rpcstack:l1\.consensusImage: does not apply to network devnet: geth --dev seals its own blocks/],
    ["a checkpoint URL", { l1: { checkpointSyncUrl: "https://sepolia.beaconstate.info" } }, /^rpcstack:l1\.checkpointSyncUrl: does not apply to network devnet/],
    ["an EC2 host", { host: { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAA ops", allowSshFrom: ["198.51.100.0/24"] } }, /^rpcstack:host\.kind: must be local or ssh on network devnet: .*not worth an EC2 instance/],
    ["a public L1 reference", { readiness: { l1ReferenceUrl: "https://rpc.example.com" } }, /^rpcstack:readiness\.l1ReferenceUrl: does not apply to network devnet/],
    ["a Starknet Devnet release without WebSocket", { l2: { image: "shardlabs/starknet-devnet-rs:0.2.4" } }, /^rpcstack:l2\.image: Starknet Devnet v0\.2\.4 is too old: .*WebSocket.*minimum is v0\.3\.0/],
  ])("%s", (_what, extra, message) => {
    expect(problems(devnet(extra)).some((p) => message.test(p))).toBe(true);
  });

  it("accepts devnet on an ssh host without a domain: a rehearsal on a server, its gateway named by the server's address", () => {
    const raw = devnet({ host: { kind: "ssh", address: "203.0.113.10", user: "ops" }, sshPrivateKey: TEST_SSH_PRIVATE_KEY });
    const entries = Object.fromEntries(Object.entries(raw).map(([k, v]) => [`rpcstack:${k}`, encodeConfigValue(v)]));
    const c = loadConfig({ entries, isSecret: (k) => k === "projectKeys" || k === "sshPrivateKey" });
    expect(publicHost(c)).toBe("203.0.113.10");
  });

  it("an unknown L2 client is named as such, not answered with the default client's poll rule", () => {
    const found = problems(devnet({ l2: { client: "erigon", pendingPollInterval: "3s" } }));
    expect(found.some((p) => p.startsWith("rpcstack:l2.client:"))).toBe(true);
    expect(found.filter((p) => /Starknet Devnet makes its own blocks/.test(p))).toEqual([]);
  });

  it("Starknet Devnet on a public network is refused; a public network without a tier is refused", () => {
    expect(problems({ network: "testnet", tier: "minimum", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, l2: { client: "starknet-devnet" } })).toContain(
      "rpcstack:l2.client: starknet-devnet runs only on network devnet (a trial chain on this machine); on testnet use juno or pathfinder",
    );
    expect(problems({ network: "mainnet", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS })).toContain("rpcstack:tier: is required");
  });
});
