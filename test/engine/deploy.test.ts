/**
 * The README's first command for real: the Pulumi engine built from its Go modules
 * (scripts/engine/build.sh: CLI, Node.js language host, docker and command provider plugins)
 * deploys the default `local` stack on this machine's Docker engine with `npm run up`, then:
 * preview and refresh find nothing to change, a gateway setting changes only the gateway, destroy
 * keeps the data volumes and the next up attaches them, no project key reaches the state in clear,
 * and a node that never syncs fails the update with the program's message until it is fixed.
 *
 * It runs on a copy of the project (its stack file edited, the committed one untouched) with the
 * test's own file backend and PULUMI_HOME, and images built without a registry (devtools/images:
 * geth from its Go module, Debian's HAProxy, certbot and Node.js, the Starknet Devnet stand-in),
 * passed through the stack's image keys. The local stack publishes fixed ports (443, 80, 8545,
 * 8546, 5050): the test stops at once, naming them, if one is taken.
 *
 * Not part of `npm test`: CI cannot build the provider plugins (see README, "The Pulumi engine").
 * Run it with `npm run test:engine` where scripts/engine/build.sh has them.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { buildTestImages, type TestImages } from "../../devtools/images/build.js";
import { withDevnetImages } from "../e2e/stackFiles.js";
import { ROOT } from "../harness.js";
import { engineEnv, engineImages, engineWithPlugins, expectNoStackTrace, projectCopy, stackObjects, type Engine } from "../support/engine.js";

const PORTS = [443, 80, 8545, 8546, 5050];
const STACK = "local";

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/** The loopback ports the local stack publishes that something else holds. */
async function takenPorts(): Promise<number[]> {
  const taken: number[] = [];
  for (const port of PORTS) {
    const free = await new Promise<boolean>((resolve) => {
      const srv = createServer().once("error", () => resolve(false)).listen(port, "0.0.0.0", () => srv.close(() => resolve(true)));
    });
    if (!free) taken.push(port);
  }
  return taken;
}

const docker = (...args: string[]) => execFileSync("docker", args, { encoding: "utf8" }).trim();
const containerId = (name: string) => docker("inspect", "--format", "{{.Id}}", name);

describe("the local stack on the real Pulumi engine", () => {
  let engine: Engine;
  let images: TestImages;
  let project: string;
  let state: string;
  let env: NodeJS.ProcessEnv;
  const pulumi = (...args: string[]) => {
    // The trial stack's empty passphrase, which npm run up chose for it (it says so).
    const r = spawnSync(join(engine.bin, "pulumi"), [...args, "--stack", STACK, "--non-interactive"], {
      cwd: project,
      env: { ...env, PULUMI_CONFIG_PASSPHRASE: "" },
      encoding: "utf8",
      timeout: 900_000,
      maxBuffer: 64 << 20,
    });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  const npmRunUp = () => {
    // npm keeps its log in the test's folder, not in the user's ~/.npm.
    const r = spawnSync("npm", ["run", "up"], { cwd: project, env: { ...env, npm_config_logs_dir: temp("rpcstack-engine-npm-logs-") }, encoding: "utf8", timeout: 900_000, maxBuffer: 64 << 20 });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  /** Sets rpcstack:<path> in the copy's stack file (the way an operator edits it). */
  const setConfig = (path: string, value: string) => {
    const r = pulumi("config", "set", "--path", `rpcstack:${path}`, value);
    expect(r.status, r.out).toBe(0);
  };

  beforeAll(async () => {
    engine = engineWithPlugins();
    const taken = await takenPorts();
    if (taken.length) throw new Error(`the local stack publishes ports ${taken.join(", ")}, which something here holds`);
    if (stackObjects("container").length) throw new Error(`containers named rpcstack-* exist already: ${stackObjects("container").join(", ")}`);
    images = engineImages(buildTestImages((s) => console.log(`engine test images: ${s}`)));
    const stack = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
    stack.config = withDevnetImages(stack.config, images);
    project = projectCopy(temp("rpcstack-engine-"), { [STACK]: stringify(stack) });
    state = temp("rpcstack-engine-state-");
    env = engineEnv(engine, temp("rpcstack-engine-home-"), { PULUMI_BACKEND_URL: `file://${state}` });
  }, 900_000);

  afterAll(() => {
    if (project) pulumi("destroy", "--yes");
    for (const c of stackObjects("container")) docker("rm", "-f", c);
    for (const n of stackObjects("network")) docker("network", "rm", n);
    for (const v of stackObjects("volume")) docker("volume", "rm", "-f", v);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 600_000);

  let key: string;
  const gatewayCa = () => {
    const file = join(project, "gateway-ca.pem");
    writeFileSync(file, docker("exec", "rpcstack-gateway", "sed", "-n", "/-----BEGIN CERTIFICATE-----/,/-----END CERTIFICATE-----/p", "/certs/gateway.pem"));
    return file;
  };

  /** Edits the copy's stack file before the stack exists (as an operator edits it). */
  const editStackFile = (edit: (config: Record<string, any>) => void) => {
    const file = join(project, "stacks/Pulumi.local.yaml");
    const doc = parse(readFileSync(file, "utf8"));
    edit(doc.config);
    writeFileSync(file, stringify(doc));
  };

  it("a config error, then a gateway.maxConnections the Docker daemon cannot carry, stop npm run up before anything exists, each as one paragraph", () => {
    editStackFile((c) => (c["rpcstack:gateway"] = { ...c["rpcstack:gateway"], rateLimitPerSecond: "fast" }));
    const config = npmRunUp();
    expect(config.status).toBe(1);
    expect(config.out).toMatch(/rpcstack: pulumi up failed after [^:\n]+:\nInvalid rpcstack stack configuration \(1 problem\):\n {2}rpcstack:gateway\.rateLimitPerSecond: must be an integer\nFix that and run npm run up again\./);
    expectNoStackTrace(config.out);
    editStackFile((c) => (c["rpcstack:gateway"] = { ...c["rpcstack:gateway"], rateLimitPerSecond: undefined, maxConnections: 1000000 }));
    const r = npmRunUp();
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/rpcstack: pulumi up failed after [^:\n]+:\nrpcstack: rpcstack:gateway\.maxConnections 1000000 needs 2001024 open files in the gateway container \(2 per connection \+ 1024\), and this machine's Docker daemon lets a container open \d+ files: set it to \d+ or less/);
    expect(r.out).toContain("`sudo systemctl edit docker`, add `[Service]` and `LimitNOFILE=1048576`");
    expect(r.out).toContain("`ulimit -Hn 1048576; ulimit -Sn 1048576`");
    expectNoStackTrace(r.out);
    // Nothing of the stack was created: no container, network or volume, no component in the state.
    expect([...stackObjects("container"), ...stackObjects("network"), ...stackObjects("volume")]).toEqual([]);
    expect(pulumi("stack", "export").out).not.toContain("rpcstack:index:");
    editStackFile((c) => delete c["rpcstack:gateway"].maxConnections);
  }, 900_000);

  it("npm run up deploys the stack with the built CLI: the endpoints, the key's read command and the smoke relays are printed", () => {
    const t0 = Date.now();
    const r = npmRunUp();
    console.log(`engine: npm run up took ${Math.round((Date.now() - t0) / 1000)} s`);
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain("rpcstack: using the Pulumi CLI on PATH (v3.248.0)");
    // The shipped default, fitted to this machine's Docker daemon and said once; no plugin found on the PATH.
    expect(r.out).toMatch(/rpcstack: rpcstack:gateway\.maxConnections is not set: \d+/);
    expect(r.out).not.toContain("from $PATH");
    expect(r.out).toContain("rpcstack: file backend without PULUMI_CONFIG_PASSPHRASE: the local stack's secrets use an empty passphrase");
    expect(r.out).toMatch(/rpcstack: stack local is up \(network devnet\)/);
    expect(r.out).toContain("ETHDEV   https://localhost/gateway/ethdev/rpc-http/<KEY>");
    expect(r.out).toMatch(/Smoke test relays through the gateway: ETHDEV rpc-http at block \d+, ETHDEV rpc at block \d+, STRKDEV rpc-http at block \d+, STRKDEV rpc at block \d+\./);
    const keys = pulumi("config", "get", "projectKeys");
    expect(keys.status, keys.out).toBe(0);
    key = JSON.parse(keys.out.trim().split("\n")[0])[0].key;
    // The key is a secret: npm run up printed how to read it, never the key.
    expect(r.out).not.toContain(key);
  }, 900_000);

  it("ethers and starknet.js relay through the gateway, trusting its self-signed certificate", () => {
    const r = spawnSync(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "test/engine/relay.ts"), "https://localhost", key], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: gatewayCa() },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ethChainId).toBe(1337);
    expect(out.ethBlock).toBeGreaterThan(0);
    expect(out.strkChainId).toBe("0x534e5f5345504f4c4941");
    expect(out.strkBlock).toBeGreaterThan(0);
  }, 120_000);

  it("right after the up, preview and refresh find nothing to change", () => {
    const preview = pulumi("preview", "--expect-no-changes", "--diff");
    expect(preview.status, preview.out).toBe(0);
    const refresh = pulumi("refresh", "--expect-no-changes", "--yes");
    expect(refresh.status, refresh.out).toBe(0);
  }, 600_000);

  it("changing gateway.rateLimitPerSecond updates only the gateway's resources; the node containers keep their ids", () => {
    const nodes = ["rpcstack-geth", "rpcstack-starknet-devnet", "rpcstack-indexer", "rpcstack-sync-health"];
    const before = Object.fromEntries(nodes.map((n) => [n, containerId(n)]));
    setConfig("gateway.rateLimitPerSecond", "150");
    const preview = pulumi("preview", "--json");
    expect(preview.status, preview.out).toBe(0);
    const steps = (JSON.parse(preview.out.slice(preview.out.indexOf("{"))).steps as { op: string; urn: string }[]).filter((s) => s.op !== "same");
    expect(steps.length).toBeGreaterThan(0);
    for (const s of steps) expect(s.urn, `${s.op} ${s.urn}`).toMatch(/rpcstack:index:Gateway\$/);
    const up = pulumi("up", "--yes", "--skip-preview");
    expect(up.status, up.out).toBe(0);
    expect(Object.fromEntries(nodes.map((n) => [n, containerId(n)]))).toEqual(before);
    expect(docker("exec", "rpcstack-gateway", "cat", "/usr/local/etc/haproxy/haproxy.cfg")).toMatch(/1500/);
  }, 900_000);

  it("the state and `pulumi stack export` hold no project key in clear text", () => {
    const exported = pulumi("stack", "export");
    expect(exported.status, exported.out).toBe(0);
    expect(exported.out).toContain("rpcstack-gateway");
    expect(exported.out).not.toContain(key);
    const files: string[] = [];
    const walk = (d: string) => readdirSync(d).forEach((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : files.push(join(d, f))));
    walk(state);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) expect(readFileSync(f, "latin1").includes(key), f).toBe(false);
    expect(readFileSync(join(project, "stacks/Pulumi.local.yaml"), "utf8")).not.toContain(key);
  });

  it("badges on the real engine: the signing key is made once and kept encrypted, the badge service's badges relay, preview stays clean, a new key generation ends the old badges", () => {
    const origin = "http://localhost:5173";
    setConfig("badges.projects[0].projectId", "engine-web");
    setConfig("badges.projects[0].chains[0]", "ETHDEV");
    setConfig("badges.projects[0].origins[0]", origin);
    const up = pulumi("up", "--yes", "--skip-preview");
    expect(up.status, up.out).toBe(0);
    const ca = gatewayCa();
    const curl = (...args: string[]) => execFileSync("curl", ["-sS", "--cacert", ca, ...args], { encoding: "utf8" });
    const askBadge = () => JSON.parse(curl("-X", "POST", "https://localhost/badge", "-H", `Origin: ${origin}`, "-H", "Content-Type: application/json", "-d", '{"projectId":"engine-web","chainIds":["ETHDEV"]}')).key as string;
    const relay = (k: string) => JSON.parse(curl("-X", "POST", `https://localhost/gateway/ethdev/rpc-http/${k}`, "-H", "Content-Type: application/json", "-d", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'));
    const first = askBadge();
    expect(relay(first).result).toBe("0x539");
    expect(pulumi("stack", "output", "badgeServerUrl").out.trim()).toBe("https://localhost/badge");
    // The private key is where the badge service reads it, and nowhere in the state in clear text.
    const env = JSON.parse(docker("inspect", "--format", "{{json .Config.Env}}", "rpcstack-badges")) as string[];
    const signing = env.find((e) => e.startsWith("RPCSTACK_BADGE_SIGNING_KEY="))!.split("=")[1];
    expect(signing.length).toBeGreaterThan(100);
    const files: string[] = [];
    const walk = (d: string) => readdirSync(d).forEach((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : files.push(join(d, f))));
    walk(state);
    for (const f of files) expect(readFileSync(f, "latin1").includes(signing), f).toBe(false);
    expect(up.out).not.toContain(signing);
    // The key is made once: nothing to change on the next preview.
    const preview = pulumi("preview", "--expect-no-changes", "--diff");
    expect(preview.status, preview.out).toBe(0);
    // A new generation: a new key; the old badge is refused, a new one relays.
    setConfig("badges.signingKeyGeneration", "2");
    const rotated = pulumi("up", "--yes", "--skip-preview");
    expect(rotated.status, rotated.out).toBe(0);
    expect(relay(first).error.message).toMatch(/badge signature invalid/);
    expect(relay(askBadge()).result).toBe("0x539");
    // Badges off again: their service goes, the stack the later tests expect comes back.
    expect(pulumi("config", "rm", "rpcstack:badges").status).toBe(0);
    const off = pulumi("up", "--yes", "--skip-preview");
    expect(off.status, off.out).toBe(0);
    expect(stackObjects("container")).not.toContain("rpcstack-badges");
  }, 900_000);

  it("a key added with npm run keys and a quota set with pulumi config set --path: the preview replaces the key sync alone, HAProxy's container stays, the key relays and its quota holds", () => {
    const gateway = containerId("rpcstack-gateway");
    const added = spawnSync("npm", ["run", "--silent", "keys", "--", "add", "engine-two", "--stack", STACK], { cwd: project, env: { ...env, PULUMI_CONFIG_PASSPHRASE: "", npm_config_logs_dir: temp("rpcstack-engine-npm-logs-") }, encoding: "utf8", timeout: 120_000 });
    expect(added.status, added.stderr).toBe(0);
    const second = added.stdout.trim();
    expect(second).toMatch(/^[A-Za-z0-9_-]{43}$/);
    setConfig("gateway.quotas[0].name", "engine-two");
    setConfig("gateway.quotas[0].calls", "3");
    setConfig("gateway.quotas[0].per", "day");
    const preview = pulumi("preview", "--json");
    expect(preview.status, preview.out).toBe(0);
    const steps = (JSON.parse(preview.out.slice(preview.out.indexOf("{"))).steps as { op: string; urn: string }[]).filter((s) => s.op !== "same");
    expect(steps.length).toBeGreaterThan(0);
    for (const s of steps) expect(s.urn, `${s.op} ${s.urn}`).toMatch(/key-sync$/);
    const up = pulumi("up", "--yes", "--skip-preview");
    expect(up.status, up.out).toBe(0);
    expect(containerId("rpcstack-gateway")).toBe(gateway);
    const ca = gatewayCa();
    const call = () => {
      const out = execFileSync("curl", ["-sS", "-i", "--cacert", ca, "-X", "POST", `https://localhost/gateway/ethdev/rpc-http/${second}`, "-H", "Content-Type: application/json", "-d", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'], { encoding: "utf8" });
      return { status: Number(/^HTTP\/\S+ (\d+)/.exec(out)?.[1]), remaining: /^ratelimit-remaining: (\d+)/im.exec(out)?.[1], body: out.slice(out.indexOf("\r\n\r\n") + 4) };
    };
    expect([call(), call(), call()].map((r) => [r.status, r.remaining])).toEqual([[200, "2"], [200, "1"], [200, "0"]]);
    const refused = call();
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error.message).toMatch(/^quota exceeded: 3 calls per day for this project key; it resets at /);
    expect(pulumi("preview", "--expect-no-changes").status).toBe(0);
  }, 900_000);

  it("destroy removes every container and network it made and keeps the data volumes; the next up attaches the same volumes", () => {
    const volumes = stackObjects("volume");
    expect(volumes).toEqual(expect.arrayContaining(["rpcstack-gateway-certs", "rpcstack-gateway-run"]));
    // A mark in each volume (Docker's CreatedAt follows the folder's mtime, so it cannot tell a kept volume from a new one).
    const mark = randomBytes(8).toString("hex");
    const onVolume = (v: string, cmd: string) => docker("run", "--rm", "--user", "0", "--entrypoint", "sh", "-v", `${v}:/v`, images.node, "-c", cmd);
    for (const v of volumes) onVolume(v, `echo ${mark} > /v/.rpcstack-engine-test`);
    const cert = docker("exec", "rpcstack-gateway", "sha256sum", "/certs/gateway.pem").split(" ")[0];
    const destroy = pulumi("destroy", "--yes");
    expect(destroy.status, destroy.out).toBe(0);
    expect(stackObjects("container")).toEqual([]);
    expect(stackObjects("network")).toEqual([]);
    expect(stackObjects("volume").sort()).toEqual(volumes.sort());
    const up = pulumi("up", "--yes", "--skip-preview");
    expect(up.status, up.out).toBe(0);
    for (const v of volumes) expect(onVolume(v, "cat /v/.rpcstack-engine-test"), v).toBe(mark);
    // cert-init found the certificate it made before and kept it.
    expect(docker("exec", "rpcstack-gateway", "sha256sum", "/certs/gateway.pem").split(" ")[0]).toBe(cert);
  }, 900_000);

  it("a relay the smoke test cannot make fails npm run up with the program's message as one paragraph; without the cause the next up succeeds", () => {
    setConfig("gateway.methodPolicy.ethdev.denyMethods[0]", "eth_blockNumber");
    try {
      const refused = npmRunUp();
      expect(refused.status).toBe(1);
      expect(refused.out).toMatch(/rpcstack: pulumi up failed after [^:\n]+:\nrpcstack: the smoke test through the gateway failed: ETHDEV rpc-http: ETHDEV: HTTP 403/);
      expectNoStackTrace(refused.out);
      expect(refused.out).not.toContain("error serializing property");
    } finally {
      const rm = pulumi("config", "rm", "--path", "rpcstack:gateway.methodPolicy");
      expect(rm.status, rm.out).toBe(0);
    }
    const fixed = pulumi("up", "--yes", "--skip-preview");
    expect(fixed.status, fixed.out).toBe(0);
  }, 900_000);

  it("a node that never syncs fails npm run up with the program's message as one paragraph; after the fix the next up succeeds", () => {
    setConfig("readiness.timeoutMinutes", "1");
    setConfig("l2.image", images.starknetDevnetStalled);
    try {
      const stuck = npmRunUp();
      expect(stuck.status).toBe(1);
      expect(stuck.out).toMatch(/rpcstack: pulumi up failed after [^:\n]+:\n(.+\n)*rpcstack: the nodes were not synced within rpcstack:readiness\.timeoutMinutes/);
      expectNoStackTrace(stuck.out);
      expect(stuck.out).not.toContain("error serializing property");
    } finally {
      setConfig("l2.image", images.starknetDevnet);
    }
    const fixed = pulumi("up", "--yes", "--skip-preview");
    expect(fixed.status, fixed.out).toBe(0);
  }, 900_000);
});
