/**
 * The host kinds on the real Pulumi engine (scripts/engine/build.sh, with the docker and command
 * plugins): an `ssh` host on loopback (Debian's openssh-server, a test user in the docker group,
 * its key in an ssh agent as an operator's would be) gets devnet deployed over ssh:// and refuses a
 * tier this machine does not meet, naming what is short; the testnet and mainnet stacks are
 * previewed with their host switched to this machine, and a testnet variant that fits it previews
 * every resource the mock engine registers for the same config.
 *
 * Needs root (a user, sshd on a port it picks) and the engine's provider plugins; runs after
 * deploy.test.ts (same Docker daemon, same fixed ports). `npm run test:engine`.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { buildTestImages, type TestImages } from "../../devtools/images/build.js";
import { withDevnetImages } from "../e2e/stackFiles.js";
import { ROOT, TEST_PROJECT_KEYS, runProgram } from "../harness.js";
import { engineEnv, engineImages, engineWithPlugins, expectNoStackTrace, projectCopy, stackObjects, type Engine } from "../support/engine.js";
import { freePort, waitFor } from "../support/net.js";

const USER = `rpcssh${process.pid % 10000}`;
// ssh keeps known hosts under the home directory of the user's passwd entry, whatever $HOME says.
const SSH_DIR = join(userInfo().homedir, ".ssh");
const KNOWN_HOSTS = join(SSH_DIR, "known_hosts");
const KEYS = JSON.stringify([{ name: "engine-test", key: "Zq3vX9kLmP2wR7tY5uB8nC1dF4gH6jK0aS" }]);
const EXTERNAL_L1 = { rpcHttp: "https://sepolia.example.net/v3/not-a-real-key", rpcWs: "wss://sepolia.example.net/ws/v3/not-a-real-key" };

const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const stackFile = (name: string) => parse(readFileSync(join(ROOT, `stacks/Pulumi.${name}.yaml`), "utf8"));

describe("host kinds on the real Pulumi engine", () => {
  let engine: Engine;
  let images: TestImages;
  let dir: string;
  let sshPort: number;
  let sshd: ChildProcess | undefined;
  let agent: ChildProcess | undefined;
  let knownHostsBefore: string | undefined;
  let sshDirBefore = true;
  let env: NodeJS.ProcessEnv;

  /** A project copy with one stack file, its own backend, and the secrets set; returns a CLI runner. */
  function stack(name: string, config: Record<string, unknown>, secrets: Record<string, string> = {}, extraEnv: Record<string, string> = {}) {
    const project = projectCopy(temp(`rpcstack-engine-${name}-`), { [name]: stringify({ config }) });
    const stackEnv = { ...env, PULUMI_BACKEND_URL: `file://${temp("rpcstack-engine-state-")}`, PULUMI_CONFIG_PASSPHRASE: "", ...extraEnv };
    const run = (args: string[], input?: string) => {
      const r = spawnSync(join(engine.bin, "pulumi"), [...args, "--stack", name, "--non-interactive"], { cwd: project, env: stackEnv, encoding: "utf8", input, timeout: 900_000, maxBuffer: 64 << 20 });
      return { status: r.status, out: `${r.stdout}\n${r.stderr}`, stdout: r.stdout };
    };
    const pulumi = (...args: string[]) => run(args);
    const init = pulumi("stack", "init");
    expect(init.status, init.out).toBe(0);
    for (const [k, v] of Object.entries({ projectKeys: KEYS, ...secrets })) {
      // The value on stdin, as an operator pipes a key file in (a PEM's leading dashes read as a flag).
      const set = run(["config", "set", "--secret", ...(k.includes(".") ? ["--path"] : []), `rpcstack:${k}`], v);
      expect(set.status, set.out).toBe(0);
    }
    return pulumi;
  }

  let volumesBefore: string[] = [];

  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error("needs root: it adds a test user and runs sshd");
    if (!existsSync("/usr/sbin/sshd")) throw new Error("needs Debian's openssh-server (/usr/sbin/sshd): bash .ci/run installs it, or apt-get install openssh-server");
    engine = engineWithPlugins();
    images = engineImages(buildTestImages((s) => console.log(`engine test images: ${s}`)));
    dir = temp("rpcstack-ssh-");
    // sshd reads authorized_keys as the user it logs in: the folder must be open to it.
    chmodSync(dir, 0o755);
    sshDirBefore = existsSync(SSH_DIR);
    volumesBefore = stackObjects("volume");
    knownHostsBefore = existsSync(KNOWN_HOSTS) ? readFileSync(KNOWN_HOSTS, "utf8") : undefined;

    // Password '*': none works, but the account is not locked (sshd refuses locked accounts, key or not).
    execFileSync("useradd", ["--create-home", "--groups", "docker", "--shell", "/bin/sh", "--password", "*", USER]);
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "rpcstack-engine-test", "-f", join(dir, "id")]);
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "hostkey")]);
    writeFileSync(join(dir, "authorized_keys"), readFileSync(join(dir, "id.pub")), { mode: 0o644 });
    sshPort = await freePort();
    writeFileSync(
      join(dir, "sshd_config"),
      [
        `Port ${sshPort}`, "ListenAddress 127.0.0.1", `HostKey ${join(dir, "hostkey")}`, `PidFile ${join(dir, "sshd.pid")}`,
        `AuthorizedKeysFile ${join(dir, "authorized_keys")}`, "StrictModes no", "PasswordAuthentication no",
        "KbdInteractiveAuthentication no", "UsePAM no", `AllowUsers ${USER}`,
      ].join("\n") + "\n",
    );
    execFileSync("mkdir", ["-p", "/run/sshd"]);
    sshd = spawn("/usr/sbin/sshd", ["-D", "-e", "-f", join(dir, "sshd_config")], { stdio: "ignore" });
    // The operator's ssh agent, holding the key the Docker provider's ssh client uses.
    const sock = join(dir, "agent.sock");
    agent = spawn("ssh-agent", ["-D", "-a", sock], { stdio: "ignore" });
    await waitFor("ssh-agent", async () => (existsSync(sock) ? true : undefined), 10_000);
    execFileSync("ssh-add", ["-q", join(dir, "id")], { env: { ...process.env, SSH_AUTH_SOCK: sock } });
    await waitFor("sshd", async () => {
      const r = spawnSync("ssh", ["-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new", "-p", String(sshPort), `${USER}@127.0.0.1`, "docker", "version", "--format", "{{.Server.Version}}"], {
        env: { ...process.env, SSH_AUTH_SOCK: sock },
        encoding: "utf8",
      });
      return r.status === 0 ? true : undefined;
    }, 30_000);
    env = engineEnv(engine, temp("rpcstack-engine-home-"), { SSH_AUTH_SOCK: sock });
  }, 900_000);

  afterAll(() => {
    for (const c of stackObjects("container")) execFileSync("docker", ["rm", "-f", c]);
    spawnSync("docker", ["network", "rm", "rpcstack"]);
    // destroy keeps data volumes (the gateway's certificates, Prometheus's data, ...): the next
    // engine run's deploy test starts from none.
    for (const v of stackObjects("volume").filter((v) => !volumesBefore.includes(v))) spawnSync("docker", ["volume", "rm", "-f", v]);
    sshd?.kill();
    agent?.kill();
    spawnSync("userdel", ["--remove", USER]);
    // The user's ~/.ssh as it was: the folder too, when the test's ssh client made it.
    if (!sshDirBefore) rmSync(SSH_DIR, { recursive: true, force: true });
    else if (knownHostsBefore === undefined) rmSync(KNOWN_HOSTS, { force: true });
    else writeFileSync(KNOWN_HOSTS, knownHostsBefore);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 600_000);

  const sshHost = () => ({ kind: "ssh", address: "127.0.0.1", port: sshPort, user: USER });

  it("ssh: devnet deploys through ssh:// (preflight over ssh, Docker provider over ssh), its smoke relays trust the certificate read over ssh", () => {
    const local = stackFile("local").config;
    const pulumi = stack(
      "sshdev",
      { ...withDevnetImages(local, images), "rpcstack:host": sshHost() },
      { sshPrivateKey: readFileSync(join(dir, "id"), "utf8") },
    );
    const up = pulumi("up", "--yes", "--skip-preview");
    expect(up.status, up.out).toBe(0);
    const outputs = JSON.parse(pulumi("stack", "output", "--json").stdout);
    expect(outputs.publicAddress).toBe("127.0.0.1");
    expect(outputs.endpoints.strkdev.endpoints.rpcHttp).toBe("https://127.0.0.1/gateway/strkdev/rpc-http/<KEY>");
    expect(Object.keys(outputs.smokeBlockNumbers).sort()).toEqual(["ETHDEV", "STRKDEV"]);
    expect(outputs.smokeBlockNumbers.STRKDEV["rpc-http"]).toBeGreaterThan(0);
    const preview = pulumi("preview", "--expect-no-changes");
    expect(preview.status, preview.out).toBe(0);
    const destroy = pulumi("destroy", "--yes");
    expect(destroy.status, destroy.out).toBe(0);
  }, 900_000);

  it("ssh: a tier this machine does not meet is refused at the preflight over ssh, naming what is short, before any container", () => {
    const pulumi = stack("sshtestnet", { ...stackFile("testnet").config, "rpcstack:host": sshHost() }, { sshPrivateKey: readFileSync(join(dir, "id"), "utf8") });
    const r = pulumi("preview");
    expect(r.status).not.toBe(0);
    expect(r.out).toContain(`${USER}@127.0.0.1:${sshPort} is too small or not ready for tier recommended`);
    expect(r.out).toMatch(/host has \d+ cores, tier recommended needs 4/);
    expect(r.out).toMatch(/host has \d+ GB free on \S+, tier recommended needs 2000 GB/);
    expect(r.out).not.toMatch(/docker:index\/container:Container.*create/);
    expectNoStackTrace(r.out);
  }, 600_000);

  it.each(["testnet", "mainnet"])("%s previewed with its host switched to this machine: the preflight refuses it, naming what is short", (name) => {
    const config = { ...stackFile(name).config, "rpcstack:host": { kind: "local" } };
    const pulumi = stack(`${name}local`, config);
    const r = pulumi("preview");
    expect(r.status).not.toBe(0);
    expect(r.out).toContain("this machine is too small or not ready for tier recommended");
    expect(r.out).toMatch(/host has \d+ cores, tier recommended needs 4/);
    expectNoStackTrace(r.out);
  }, 600_000);

  it("a testnet stack a host meets (minimum tier, an external L1, a 200 GB disk) previews every resource the mock engine registers", async () => {
    // A second Docker daemon whose data root is a thin-provisioned 200 GB file system: a host whose
    // disk the tier fits (this machine has 2 cores, the minimum tier's; its own disk may be smaller).
    const disk = join(dir, "disk.img");
    const mnt = join(dir, "mnt");
    execFileSync("truncate", ["-s", "200G", disk]);
    execFileSync("mkfs.ext4", ["-q", "-F", disk]);
    execFileSync("mkdir", ["-p", mnt]);
    execFileSync("mount", ["-o", "loop", disk, mnt]);
    const sock = join(dir, "docker2.sock");
    // A bridge of its own: with `--bridge none` a daemon deletes docker0, which the first daemon uses.
    const bridge = "rpcstk2br0";
    execFileSync("ip", ["link", "add", bridge, "type", "bridge"]);
    const dockerd = spawn("dockerd", ["--data-root", join(mnt, "docker"), "--exec-root", join(dir, "docker2-exec"), "--pidfile", join(dir, "docker2.pid"), "--host", `unix://${sock}`, "--bridge", bridge, "--iptables=false"], { stdio: "ignore" });
    try {
      await waitFor("the second Docker daemon", async () => (spawnSync("docker", ["-H", `unix://${sock}`, "info"], { stdio: "ignore" }).status === 0 ? true : undefined), 60_000);
      const config = {
        ...stackFile("testnet").config,
        "rpcstack:host": { kind: "local", diskGB: 100 },
        "rpcstack:tier": "minimum",
      };
      const pulumi = stack("testnetfits", config, { "l1.external.rpcHttp": EXTERNAL_L1.rpcHttp, "l1.external.rpcWs": EXTERNAL_L1.rpcWs }, { DOCKER_HOST: `unix://${sock}` });
      await previewMatchesMock(pulumi, {
        host: { kind: "local", diskGB: 100 },
        tier: "minimum",
      });
    } finally {
      dockerd.kill();
      await new Promise((r) => dockerd.once("exit", r));
      spawnSync("umount", [mnt]);
      spawnSync("ip", ["link", "delete", bridge]);
    }
  }, 600_000);
});

/** `pulumi preview --json` lists the resources the mock engine registers for the same testnet config. */
async function previewMatchesMock(pulumi: (...args: string[]) => { status: number | null; out: string; stdout: string }, config: Record<string, unknown>) {
  const r = pulumi("preview", "--json");
  expect(r.status, r.out).toBe(0);
  const steps = JSON.parse(r.stdout).steps as { op: string; urn: string }[];
  // The Stack itself and the default providers the engine makes for invokes are not the program's.
  const real = steps
    .map((s) => s.urn.split("::").slice(-2).join("::").replace(/^.*\$/, ""))
    .filter((u) => !u.startsWith("pulumi:pulumi:Stack") && !/^pulumi:providers:\w+::default/.test(u))
    .sort();
  const mock = await runProgram({ stack: "testnet", config, secrets: { projectKeys: TEST_PROJECT_KEYS, l1: { external: EXTERNAL_L1 } } });
  expect(mock.error).toBeUndefined();
  expect(real).toEqual(mock.resources.map((x) => `${x.type}::${x.name}`).sort());
  // The external L1's URLs never reach the preview in clear.
  expect(r.out).not.toContain("not-a-real-key");
}
