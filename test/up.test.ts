/**
 * `npm run up` against a fake Pulumi CLI (test/support/fakePulumi.ts) and a fake installer: the
 * real Automation API drives the fake, so these tests see the CLI calls @pulumi/pulumi makes.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PulumiCommand } from "@pulumi/pulumi/automation";
import { loadConfig } from "../config/index.js";
import { publicEndpoints } from "../plan/index.js";
import { providerManifest } from "../manifest/provider.js";
import { CLI_DIR, PULUMI_CLI_VERSION, STATE_DIR, dockerProblem, main, realDeps, type UpDeps } from "../scripts/up.js";
import { makeFakePulumi, type FakePulumi } from "./support/fakePulumi.js";
import { TEST_PROJECT_KEYS, stackFileConfig, encodeConfigValue } from "./harness.js";

const dirs: string[] = [];
const tempDir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** What the real program's outputs would be for the local stack: from the same config and builders. */
function localOutputs(): Record<string, unknown> {
  const entries = { ...stackFileConfig("local"), "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS) };
  const settings = loadConfig({ entries });
  const chains = providerManifest(settings).chains;
  return {
    network: settings.network.name,
    endpoints: publicEndpoints(settings),
    providerManifest: providerManifest(settings),
    // As the real engine hands outputs back: keys sorted.
    smokeBlockNumbers: Object.fromEntries(chains.map((c) => [c.chainId, { rpc: 41, "rpc-http": 41 }])),
  };
}

interface Run {
  code: number;
  out: string;
  err: string;
  installs: { root: string; version: string }[];
}

/**
 * A checkout in a temp folder, the fake CLI either on "PATH" (found without a root) or only
 * where the fake installer puts it, and the real Automation API in between.
 */
function setup(opts: { onPath?: boolean; loggedIn?: boolean; installFails?: string; state?: Record<string, unknown>; root?: string; pathCli?: FakePulumi; env?: Record<string, string> } = {}) {
  const root = opts.root ?? tempDir("rpcstack-up-");
  const pathCli = opts.pathCli ?? (opts.onPath ? makeFakePulumi(tempDir("rpcstack-path-"), { loggedIn: opts.loggedIn ?? false, outputs: localOutputs(), ...opts.state }) : undefined);
  let installed: FakePulumi | undefined;
  const installs: Run["installs"] = [];
  const clock = [1_000, 1_000 + 192_000];
  const real = realDeps(root);
  const deps = (out: string[], err: string[]): UpDeps => ({
    ...real,
    env: opts.env ?? {},
    out: (s) => void out.push(s),
    err: (s) => void err.push(s),
    now: () => clock.shift() ?? 1_000 + 192_000,
    dockerProblem: async () => undefined,
    findCli: async (cliRoot) => {
      if (!cliRoot) return pathCli ? PulumiCommand.get({ root: pathCli.root }) : undefined;
      return PulumiCommand.get({ root: cliRoot }).catch(() => undefined);
    },
    installCli: async (o) => {
      installs.push(o);
      // What Pulumi's installer reports when get.pulumi.com cannot be reached.
      if (opts.installFails) throw new Error(opts.installFails);
      installed = makeFakePulumi(o.root, { loggedIn: opts.loggedIn ?? false, outputs: localOutputs(), ...opts.state });
      return PulumiCommand.get({ root: o.root });
    },
  });
  return {
    root,
    pathCli,
    installed: () => installed,
    async run(argv: string[] = []): Promise<Run> {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(argv, deps(out, err));
      return { code, out: out.join(""), err: err.join(""), installs };
    },
  };
}

/** The CLI calls in order, without the flag the SDK appends to every call. */
const commands = (cli: FakePulumi) => cli.calls().map((c) => c.args.filter((a) => a !== "--non-interactive"));

describe("npm run up on a machine without a Pulumi CLI or login", () => {
  it("installs the pinned CLI into the checkout, uses a file backend, makes a secret key, streams up and prints what to do next", async () => {
    const s = setup();
    const r = await s.run();
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const cliRoot = join(s.root, CLI_DIR, PULUMI_CLI_VERSION);
    expect(r.installs).toEqual([{ root: cliRoot, version: PULUMI_CLI_VERSION }]);
    expect(r.out).toContain(`rpcstack: no Pulumi CLI on PATH: installing Pulumi CLI v${PULUMI_CLI_VERSION} into ${CLI_DIR}/${PULUMI_CLI_VERSION}/ (in this checkout, git-ignored)`);
    expect(r.out).toContain(`rpcstack: installed Pulumi CLI v${PULUMI_CLI_VERSION} at ${CLI_DIR}/${PULUMI_CLI_VERSION}/bin/pulumi`);
    expect(r.out).toContain(`rpcstack: no Pulumi login: keeping the stack's state in ${STATE_DIR}/ in this checkout`);
    expect(existsSync(join(s.root, STATE_DIR))).toBe(true);

    const cli = s.installed()!;
    const calls = commands(cli);
    expect(calls.map((a) => a.slice(0, 2).join(" "))).toEqual([
      "version", // PulumiCommand.get after the install
      "whoami --json",
      "stack select",
      "stack init",
      "config get",
      "config set",
      "up --yes",
      "stack output",
      "stack output",
      "stack history",
    ]);
    expect(calls[2]).toEqual(["stack", "select", "--stack", "local"]);
    expect(calls[3]).toEqual(["stack", "init", "local"]);
    expect(calls[4]).toEqual(["config", "get", "rpcstack:projectKeys", "--json", "--stack", "local"]);
    expect(calls[5].slice(0, 6)).toEqual(["config", "set", "rpcstack:projectKeys", "--stack", "local", "--secret"]);
    expect(calls[6]).toEqual(expect.arrayContaining(["up", "--yes", "--skip-preview", "--stack", "local"]));
    // Every stack command runs against the file backend in the checkout, with the empty trial passphrase.
    for (const c of cli.calls().slice(2)) {
      expect(c.env).toEqual({ PULUMI_BACKEND_URL: `file://${join(s.root, STATE_DIR)}`, PULUMI_CONFIG_PASSPHRASE: "" });
    }

    // The key: generated, stored as a secret, never printed.
    const stored = cli.state().config.local["rpcstack:projectKeys"];
    expect(stored.secret).toBe(true);
    const keys = JSON.parse(stored.value) as { name: string; key: string }[];
    expect(keys).toEqual([{ name: "local", key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) }]);
    expect(r.out).not.toContain(keys[0].key);
    expect(r.out).toContain('rpcstack: generated project key "local", stored as a Pulumi secret (rpcstack:projectKeys in stacks/Pulumi.local.yaml)');

    // The engine's own output, streamed as it came.
    expect(r.out).toContain("Updating (local)");
    expect(r.out).toContain("Resources:\n    + 30 created");
    expect(r.out.indexOf("Updating (local)")).toBeLessThan(r.out.indexOf("rpcstack: stack local is up"));

    // The closing summary: endpoints, the banner, how to read the key, one relay, the time.
    expect(r.out).toContain("rpcstack: stack local is up (network devnet) in 3m 12s.");
    expect(r.out).toContain("NOT Ethereum, Sepolia or Starknet");
    expect(r.out).toContain("  ETHDEV   https://localhost/gateway/ethdev/rpc-http/<KEY>");
    expect(r.out).toContain("  STRKDEV  wss://localhost/gateway/strkdev/rpc/<KEY>?secret=null");
    expect(r.out).toContain("Smoke test relays through the gateway: ETHDEV rpc-http at block 41");
    const read = `PULUMI_BACKEND_URL=file://${join(s.root, STATE_DIR)} PULUMI_CONFIG_PASSPHRASE='' ${CLI_DIR}/${PULUMI_CLI_VERSION}/bin/pulumi config get projectKeys --stack local`;
    expect(r.out).toContain(`print it with:\n  ${read}\n`);
    expect(r.out).toContain(`  KEY=$(${read} | node -pe`);
    expect(r.out).toContain(
      `  curl -sk https://localhost/gateway/strkdev/rpc-http/$KEY -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","method":"starknet_blockNumber","params":[],"id":1}'`,
    );
  });

  it("a second run reuses the installed CLI, the stack and the key: no download, no new key", async () => {
    const s = setup();
    expect((await s.run()).code).toBe(0);
    const before = s.installed()!.state().config.local["rpcstack:projectKeys"].value;
    const again = await s.run();
    expect(again.code).toBe(0);
    expect(again.installs).toHaveLength(1);
    expect(again.out).toContain(`rpcstack: using Pulumi CLI v${PULUMI_CLI_VERSION} installed earlier in ${CLI_DIR}/${PULUMI_CLI_VERSION}/`);
    expect(again.out).toContain("rpcstack: project keys already set (rpcstack:projectKeys)");
    const second = commands(s.installed()!).slice(10);
    expect(second.map((a) => a.slice(0, 2).join(" "))).not.toContain("config set");
    expect(second.map((a) => a.slice(0, 2).join(" "))).not.toContain("stack init");
    expect(s.installed()!.state().config.local["rpcstack:projectKeys"].value).toBe(before);
  });

  it("when the download fails it stops with one message: version, folder, the installer's error, and what to do", async () => {
    const s = setup({ installFails: "Failed to download https://get.pulumi.com/install.sh: fetch failed" });
    const r = await s.run();
    expect(r.code).toBe(1);
    expect(r.installs).toHaveLength(1);
    expect(r.err).toBe(
      `rpcstack: could not install Pulumi CLI v${PULUMI_CLI_VERSION} into ${CLI_DIR}/${PULUMI_CLI_VERSION}/: Failed to download https://get.pulumi.com/install.sh: fetch failed. ` +
        "Check this machine's internet access, or install the CLI yourself (https://www.pulumi.com/docs/install/), or, where Pulumi's downloads cannot be reached, " +
        'build it from the Go module proxy with bash scripts/engine/build.sh and put its bin/ first on PATH (export PATH="$(bash scripts/engine/build.sh --print-dir)/bin:$PATH"); then run npm run up again.\n',
    );
    expect(existsSync(join(s.root, STATE_DIR))).toBe(false);
  });

  it("a failed pulumi up exits 1 after the engine's own words, closing with the program's error alone", async () => {
    const s = setup({ state: { upFails: "rpcstack: this machine is too small or not ready for network devnet:\n  host has 1 cores, network devnet needs 2" } });
    const r = await s.run();
    expect(r.code).toBe(1);
    expect(r.err).toContain("error: rpcstack: this machine is too small or not ready for network devnet");
    expect(r.err.endsWith(
      "rpcstack: pulumi up failed after 3m 12s:\nrpcstack: this machine is too small or not ready for network devnet:\n  host has 1 cores, network devnet needs 2\nFix that and run npm run up again.\n",
    )).toBe(true);
    expect(r.out).not.toContain("is up");
  });

  it("a key that cannot be read (a wrong passphrase) is never replaced", async () => {
    const s = setup({ state: { configGetFails: "incorrect passphrase", stacks: ["local"], config: { local: {} } } });
    const r = await s.run();
    expect(r.code).toBe(1);
    expect(r.err).toBe("rpcstack: could not read rpcstack:projectKeys from stack local: error: incorrect passphrase\n");
    expect(commands(s.installed()!).map((a) => a.slice(0, 2).join(" "))).not.toContain("config set");
  });
});

describe("npm run up with a Pulumi CLI on PATH", () => {
  it("uses it and the operator's login: no install, no file backend, plain `pulumi` in the hints", async () => {
    const s = setup({ onPath: true, loggedIn: true });
    const r = await s.run();
    expect(r.code).toBe(0);
    expect(r.installs).toEqual([]);
    expect(r.out).toContain("rpcstack: using the Pulumi CLI on PATH (v3.248.0)");
    expect(r.out).not.toContain("no Pulumi login");
    expect(s.pathCli!.calls().every((c) => c.env.PULUMI_BACKEND_URL === undefined)).toBe(true);
    expect(r.out).toContain("print it with:\n  pulumi config get projectKeys --stack local\n");
    expect(existsSync(join(s.root, CLI_DIR))).toBe(false);
  });
});

describe("npm run up on a file backend the operator chose", () => {
  it("PULUMI_BACKEND_URL=file://… without a passphrase: the trial stack's secrets get the empty one, said once (the CLI refuses to create the stack otherwise)", async () => {
    const state = tempDir("rpcstack-own-state-");
    const s = setup({ onPath: true, env: { PULUMI_BACKEND_URL: `file://${state}` } });
    const r = await s.run();
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("rpcstack: file backend without PULUMI_CONFIG_PASSPHRASE: the local stack's secrets use an empty passphrase (set one to keep them)");
    expect(r.out).not.toContain("no Pulumi login");
    expect(s.pathCli!.calls().filter((c) => c.args[0] === "stack").every((c) => c.env.PULUMI_CONFIG_PASSPHRASE === "")).toBe(true);
  });

  it("a login to a file backend (pulumi login file://…) gets the same; an operator's passphrase is kept", async () => {
    const s = setup({ onPath: true, loggedIn: true, state: { loginUrl: "file:///srv/pulumi" } });
    const first = await s.run();
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    // The CLI inherits the operator's environment, where their passphrase is.
    process.env.PULUMI_CONFIG_PASSPHRASE = "correct horse";
    try {
      const own = setup({ onPath: true, loggedIn: true, state: { loginUrl: "file:///srv/pulumi" }, env: { PULUMI_CONFIG_PASSPHRASE: "correct horse" } });
      const r = await own.run();
      expect(r.code).toBe(0);
      expect(r.out).not.toContain("empty passphrase");
      expect(own.pathCli!.calls().filter((c) => c.args[0] === "stack").every((c) => c.env.PULUMI_CONFIG_PASSPHRASE === "correct horse")).toBe(true);
    } finally {
      delete process.env.PULUMI_CONFIG_PASSPHRASE;
    }
  });

  it("a stack the CLI cannot create is said in one line with the CLI's own error, not a stack trace", async () => {
    const s = setup({ onPath: true, loggedIn: true, state: { stackInitFails: "could not create secrets manager for new stack: open /run/secrets/pass: no such file or directory" } });
    const r = await s.run();
    expect(r.code).toBe(1);
    expect(r.err).toBe("rpcstack: could not select or create stack local: error: could not create secrets manager for new stack: open /run/secrets/pass: no such file or directory\n");
  });
});

describe("npm run up without Docker", () => {
  it("stops with one sentence before touching Pulumi", async () => {
    const s = setup();
    const out: string[] = [];
    const err: string[] = [];
    let asked = false;
    const deps: UpDeps = {
      ...realDeps(s.root),
      out: (x) => void out.push(x),
      err: (x) => void err.push(x),
      dockerProblem: () => dockerProblem(join(s.root, "no-such-docker")),
      findCli: async () => ((asked = true), undefined),
    };
    expect(await main([], deps)).toBe(1);
    expect(err.join("")).toBe(
      "rpcstack: the local stack runs in Docker and there is no docker command here: install Docker Engine (https://docs.docker.com/engine/install/), start it, and run npm run up again.\n",
    );
    expect(err.join("").trim().split(/(?<=\.)\s+(?=[A-Z])/)).toHaveLength(1);
    expect(asked).toBe(false);
    expect(out.join("")).toBe("");
  });

  it("a docker command whose daemon does not answer is told to start it", async () => {
    const dir = tempDir("rpcstack-docker-");
    const docker = join(dir, "docker");
    writeFileSync(docker, "#!/bin/sh\necho 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock.' >&2\nexit 1\n");
    chmodSync(docker, 0o755);
    expect(await dockerProblem(docker)).toMatch(/^Docker is installed but its daemon does not answer \(docker info failed\): start it/);
  });
});

describe("the pinned CLI", () => {
  it("is the release of the @pulumi/pulumi SDK this package locks", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    expect(PULUMI_CLI_VERSION).toBe(require("@pulumi/pulumi/version").version);
  });
});
