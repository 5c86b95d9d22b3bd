import { execFileSync, spawnSync } from "node:child_process";
import { cpus } from "node:os";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TIERS } from "../config/index.js";
import { AWS_SIZING, PUBLIC_PORTS, cloudInitUserData, monthlyCost } from "../hosts/aws.js";
import { INSTALL_DOCKER_SCRIPT, PREFLIGHT_SCRIPT, assertHostFits, dockerVersionOk, parsePreflight, preflightShortfalls, sshPreflightCommand, type HostFacts } from "../hosts/preflight.js";
import { BIG_HOST, runProgram } from "./harness.js";

const GiB_KiB = 1024 * 1024;
const facts = (over: Partial<HostFacts> = {}): HostFacts => ({
  cores: 4,
  memoryKiB: 16 * GiB_KiB,
  diskPath: "/var/lib/docker",
  diskFreeKiB: 2100 * 1e9 / 1024,
  dockerVersion: "27.5.1",
  ...over,
});

describe("preflight rules (pure)", () => {
  it("a host that meets the tier passes", () => {
    expect(preflightShortfalls(facts(), TIERS.recommended, { installsDocker: false })).toEqual([]);
    expect(preflightShortfalls(facts({ cores: 2, memoryKiB: 3.8 * GiB_KiB, diskFreeKiB: 650e9 / 1024 }), TIERS.minimum, { installsDocker: false })).toEqual([]);
  });

  it("names every shortfall with the host's figure and the tier's", () => {
    const short = preflightShortfalls(
      facts({ cores: 2, memoryKiB: 8 * GiB_KiB, diskFreeKiB: 500e9 / 1024, dockerVersion: "19.03.8" }),
      TIERS.recommended,
      { installsDocker: true },
    );
    expect(short).toEqual([
      "host has 2 cores, tier recommended needs 4",
      "host has 8.0 GiB memory, tier recommended needs 16 GB",
      "host has 500 GB free on /var/lib/docker, tier recommended needs 2000 GB",
      "host runs Docker 19.03.8, the package needs 20.10 or newer",
    ]);
  });

  it("a missing Docker is a shortfall locally but not where the package installs it", () => {
    expect(preflightShortfalls(facts({ dockerVersion: "" }), TIERS.minimum, { installsDocker: false })).toEqual([
      "Docker is not installed or its daemon is not running (install Docker Engine and start it)",
    ]);
    expect(preflightShortfalls(facts({ dockerVersion: "" }), TIERS.minimum, { installsDocker: true })).toEqual([]);
  });

  it("docker versions compare numerically", () => {
    expect(["20.10.0", "24.0.7", "27.5.1", "100.0"].map(dockerVersionOk)).toEqual([true, true, true, true]);
    expect(["20.9.9", "19.03.12", "garbage", ""].map(dockerVersionOk)).toEqual([false, false, false, false]);
  });

  it("a garbled report is an error, not a pass", () => {
    expect(() => parsePreflight("cores=4\nmemory_kib=abc\n")).toThrow(/no memory_kib/);
    expect(() => assertHostFits("h", "", TIERS.minimum, { installsDocker: true })).toThrow(/no cores/);
  });
});

describe("the ssh host's Docker set-up script, run for real with stand-in docker and sudo", () => {
  /** Runs INSTALL_DOCKER_SCRIPT with only the given commands on PATH (each a shell script), and `id`. */
  function install(commands: Record<string, string>) {
    const bin = mkdtempSync(join(tmpdir(), "rpcstack-install-docker-"));
    try {
      execFileSync("ln", ["-s", execFileSync("sh", ["-c", "command -v id"], { encoding: "utf8" }).trim(), join(bin, "id")]);
      for (const [name, body] of Object.entries(commands)) writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
      writeFileSync(join(bin, "log"), "");
      const r = spawnSync("/bin/sh", ["-c", INSTALL_DOCKER_SCRIPT], { encoding: "utf8", env: { PATH: bin, LOG: join(bin, "log") } });
      return { status: r.status, stderr: r.stderr, calls: execFileSync("cat", [join(bin, "log")], { encoding: "utf8" }).trim().split("\n").filter(Boolean) };
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  }

  it("a user who can already use Docker (docker group) needs nothing, and no sudo", () => {
    const r = install({ docker: 'echo "docker $*" >> "$LOG"; exit 0' });
    expect(r).toMatchObject({ status: 0, calls: ["docker version"] });
  });

  it("no usable Docker and no sudo: says what to do, exits 1", () => {
    const r = install({ docker: "exit 1" });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^rpcstack: \S+ cannot use Docker on this server and cannot sudo without a password to set it up: install Docker Engine and add \S+ to the docker group, or allow it sudo$/m);
  });

  it("Docker installed but not usable by the user: only adds the user to the docker group, with sudo", () => {
    const r = install({ docker: 'exit 1', sudo: 'echo "sudo $*" >> "$LOG"; [ "$1" = docker ] && exit 0; exit 0' });
    expect(r.status).toBe(0);
    expect(r.calls).toEqual(["sudo -n true", "sudo docker version", expect.stringMatching(/^sudo usermod -aG docker \S+$/)]);
  });
});

describe("the preflight script, run for real on this machine", () => {
  it("reports this machine's nproc, memory and free disk", () => {
    const out = execFileSync("/bin/sh", ["-c", PREFLIGHT_SCRIPT], { encoding: "utf8" });
    const f = parsePreflight(out);
    expect(f.cores).toBe(Number(execFileSync("nproc", { encoding: "utf8" }).trim()));
    expect(f.cores).toBeLessThanOrEqual(cpus().length);
    const memTotal = Number(/MemTotal:\s+(\d+)/.exec(execFileSync("cat", ["/proc/meminfo"], { encoding: "utf8" }))![1]);
    expect(f.memoryKiB).toBe(memTotal);
    const probe = spawnSync("/bin/sh", ["-c", `p=${f.diskPath}; while [ ! -d "$p" ]; do p=$(dirname "$p"); done; df -Pk "$p" | awk 'NR==2 {print $4}'`], { encoding: "utf8" });
    // Free space moves as other processes write; a few MiB of drift is the same reading.
    expect(Math.abs(Number(probe.stdout.trim()) - f.diskFreeKiB)).toBeLessThan(64 * 1024);
    // Whatever this machine is, the verdict follows the figures.
    const verdict = preflightShortfalls(f, TIERS.recommended, { installsDocker: true });
    expect(verdict.some((s) => s.startsWith("host has") && s.includes("cores"))).toBe(f.cores < 4);
  });
});

describe("host kinds under the mock engine", () => {
  it("local: preflight on this machine as an invoke (every preview and update, nothing kept in state), Docker provider on the local daemon, address 127.0.0.1", async () => {
    const run = await runProgram({ stack: "local" });
    expect(run.invokes.filter((i) => i.token === "command:local:run" && i.inputs.command === PREFLIGHT_SCRIPT)).toHaveLength(1);
    // A command resource with a changing trigger was a change on every preview (the real engine showed it).
    expect(run.byType("command:local:Command")).toEqual([]);
    const provider = run.one("pulumi:providers:docker");
    expect(provider.inputs.host).toMatch(/^unix:\/\/|^tcp:\/\/|^ssh:\/\//);
    expect(run.outputs.publicAddress).toBe("127.0.0.1");
    expect(run.byType("aws:ec2/instance:Instance")).toHaveLength(0);
  });

  it("local on Sepolia: a machine below the tier stops the deployment with what is short", async () => {
    const run = await runProgram({ stack: "local", config: { network: "testnet", tier: "recommended" }, hostFacts: { cores: 1, disk_free_kib: 100 * GiB_KiB } });
    expect(run.error?.message).toMatch(/this machine is too small or not ready for tier recommended/);
    expect(run.error?.message).toContain("host has 1 cores, tier recommended needs 4");
    expect(run.error?.message).toMatch(/host has 107 GB free on \/var\/lib\/docker, tier recommended needs 2000 GB/);
  });

  it("local on devnet: 50 GB free is plenty; a machine below the trial's own needs is told what it lacks", async () => {
    const fits = await runProgram({ stack: "local", hostFacts: { cores: 2, memory_kib: 4 * GiB_KiB, disk_free_kib: 50 * GiB_KiB } });
    expect(fits.error).toBeUndefined();
    const small = await runProgram({ stack: "local", hostFacts: { cores: 2, disk_free_kib: 5 * GiB_KiB } });
    expect(small.error?.message).toMatch(/this machine is too small or not ready for network devnet/);
    expect(small.error?.message).toMatch(/host has 5 GB free on \/var\/lib\/docker, network devnet needs 10 GB/);
  });

  it("ssh: preflight through this machine's ssh client as the Docker provider connects (every preview and update), idempotent Docker install with the secret key; provider over ssh://", async () => {
    const run = await runProgram({ stack: "testnet" });
    const pre = run.invokes.filter((i) => i.token === "command:local:run" && i.inputs.stdin === PREFLIGHT_SCRIPT);
    expect(pre.map((i) => i.inputs.command)).toEqual([sshPreflightCommand("rpcstack", "203.0.113.10", 22)]);
    expect(pre[0].inputs.command).toContain("'BatchMode=yes' '-o' 'StrictHostKeyChecking=accept-new' '-p' '22' 'rpcstack@203.0.113.10' ");
    const install = run.one("command:remote:Command", "rpcstack-host-install-docker");
    expect(install.inputs.connection).toMatchObject({ host: "203.0.113.10", port: 22, user: "rpcstack" });
    expect(install.secretInputs.some((p) => p.startsWith("connection"))).toBe(true);
    expect(install.inputs.create).toContain("command -v docker");
    expect(install.inputs.create).toContain("apt-get install -y -q docker.io");
    const provider = run.one("pulumi:providers:docker");
    expect(provider.inputs.host).toBe("ssh://rpcstack@203.0.113.10:22");
    // Provider configuration reaches the engine JSON-encoded.
    expect(JSON.parse(provider.inputs.sshOpts)).toEqual(["-o", "StrictHostKeyChecking=accept-new"]);
    expect(provider.dependencies).toContain(install.urn);
    expect(run.outputs.publicAddress).toBe("203.0.113.10");
  });

  it("ssh: an ssh client without the key stops the update at the preflight, naming the connection and the way out", async () => {
    const run = await runProgram({ stack: "testnet", sshFails: { exit: 255, said: "rpcstack@203.0.113.10: Permission denied (publickey)." } });
    expect(run.error?.message).toContain("cannot reach rpcstack@203.0.113.10:22 with this machine's ssh client (ssh exited 255: rpcstack@203.0.113.10: Permission denied (publickey).)");
    expect(run.error?.message).toContain("ssh-add");
    expect(run.byType("docker:index/container:Container")).toEqual([]);
  });

  it("ssh: a server below the tier stops before Docker is installed", async () => {
    const run = await runProgram({ stack: "testnet", hostFacts: { cores: 2, memory_kib: 2 * GiB_KiB } });
    expect(run.error?.message).toContain("rpcstack@203.0.113.10:22 is too small or not ready for tier recommended");
    expect(run.error?.message).toMatch(/host has 2\.0 GiB memory, tier recommended needs 16 GB/);
  });

  it("the private SSH key never appears outside a secret", async () => {
    const run = await runProgram({ stack: "testnet" });
    // Exactly the Docker install holds it, as its secret connection: none without it, none in the clear.
    const holders = run.resources.filter((r) => JSON.stringify(r.inputs).includes("BEGIN OPENSSH PRIVATE KEY"));
    expect(holders.map((r) => [r.name, r.secretInputs]).sort()).toEqual([["rpcstack-host-install-docker", ["connection"]]]);
    expect(JSON.stringify(run.invokes)).not.toContain("PRIVATE KEY");
    expect(JSON.stringify(run.outputs)).not.toContain("PRIVATE KEY");
  });
});

describe.each(["minimum", "recommended"] as const)("aws host, tier %s", (tier) => {
  const network = tier === "minimum" ? "testnet" : "mainnet";
  // Sepolia's L1 + L2 (~1.1 TB) fits the minimum tier only on a bigger volume (host.diskGB).
  const disk = tier === "minimum" ? { diskGB: 1200 } : {};
  const config = { tier, network, host: { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32", "2001:db8::/64"], ...disk } };
  // The nodes' minimum memory (20 GiB) is more than the m7i type of either tier: r7i at the tier's cores.
  const sizing = tier === "minimum"
    ? { instanceType: "r7i.large", dataVolume: { sizeGiB: 1200, iops: 3000, throughputMiBps: 239 }, rootVolumeGiB: 30 }
    : { instanceType: "r7i.xlarge", dataVolume: { sizeGiB: 2000, iops: 8000, throughputMiBps: 668 }, rootVolumeGiB: 30 };

  it("instance type, gp3 volume, encryption, IMDSv2, retained data volume", async () => {
    const run = await runProgram({ stack: "mainnet", config });
    const instance = run.one("aws:ec2/instance:Instance");
    expect(instance.inputs.instanceType).toBe(sizing.instanceType);
    expect(instance.inputs.metadataOptions).toMatchObject({ httpTokens: "required", httpEndpoint: "enabled" });
    expect(instance.inputs.rootBlockDevice).toMatchObject({ encrypted: true, volumeType: "gp3" });
    const vol = run.one("aws:ebs/volume:Volume");
    expect(vol.inputs).toMatchObject({ type: "gp3", size: sizing.dataVolume.sizeGiB, encrypted: true, iops: sizing.dataVolume.iops, throughput: sizing.dataVolume.throughputMiBps });
    expect(vol.retainOnDelete).toBe(true);
    expect(vol.inputs.availabilityZone).toBe(instance.inputs.availabilityZone);
    expect(run.one("aws:ec2/volumeAttachment:VolumeAttachment").dependencies).toEqual(expect.arrayContaining([instance.urn, vol.urn]));
    expect(run.one("aws:ec2/eip:Eip").inputs.instance).toBe(`${instance.name}-id`);
    expect(run.one("pulumi:providers:aws").inputs.region).toBe("eu-west-1");
  });

  it("security group: 443, 80 and p2p open; SSH only from allowSshFrom; nothing else", async () => {
    const run = await runProgram({ stack: "mainnet", config });
    const sg = run.one("aws:ec2/securityGroup:SecurityGroup");
    const rules: any[] = sg.inputs.ingress;
    const open = rules.filter((r) => r.cidrBlocks?.includes("0.0.0.0/0"));
    expect(open.map((r) => `${r.fromPort}/${r.protocol}`).sort()).toEqual(PUBLIC_PORTS.map((p) => `${p.port}/${p.protocol}`).sort());
    const ssh = rules.filter((r) => r.fromPort <= 22 && r.toPort >= 22);
    expect(ssh.map((r) => [...(r.cidrBlocks ?? []), ...(r.ipv6CidrBlocks ?? [])])).toEqual([["198.51.100.7/32"], ["2001:db8::/64"]]);
    const forbidden = [8545, 8546, 8551, 5052, 5054, 6060, 6061, 9090, 9545, 9099];
    expect(rules.filter((r) => forbidden.some((p) => r.fromPort <= p && r.toPort >= p))).toEqual([]);
    expect(rules.every((r) => r.fromPort === r.toPort && r.protocol !== "-1")).toBe(true);
  });

  it("Docker provider over ssh:// to the Elastic IP, after cloud-init; cost estimate output", async () => {
    const run = await runProgram({ stack: "mainnet", config });
    const provider = run.one("pulumi:providers:docker");
    expect(provider.inputs.host).toBe("ssh://admin@198.51.100.20");
    expect(provider.dependencies).toContain(run.one("command:local:Command", "rpcstack-host-wait-cloud-init").urn);
    expect(run.outputs.monthlyCostUsd).toBe(monthlyCost(sizing).totalUsdPerMonth);
    expect(run.outputs.monthlyCostUsd).toBeGreaterThan(50);
  });
});

describe("aws cost estimate", () => {
  it("adds instance hours, gp3 size, extra IOPS and throughput, and the public IPv4", () => {
    const c = monthlyCost(AWS_SIZING.recommended);
    expect(c.instance).toBeCloseTo(0.2016 * 730, 2);
    expect(c.dataVolume).toBeCloseTo(2000 * 0.08 + 7000 * 0.005 + 375 * 0.04, 2);
    expect(c.totalUsdPerMonth).toBeCloseTo(c.instance + c.dataVolume + c.rootVolume + c.publicIp, 1);
    expect(c.basis).toMatch(/us-east-1, 2024-06/);
  });
});

describe("aws instance type override", () => {
  it("a larger type is used; retainData false lets the data volume go", async () => {
    const run = await runProgram({ stack: "mainnet", config: { host: { kind: "aws", region: "us-east-2", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32"], instanceType: "r7i.xlarge" }, retainData: false } });
    expect(run.one("aws:ec2/instance:Instance").inputs.instanceType).toBe("r7i.xlarge");
    expect(run.one("aws:ebs/volume:Volume").retainOnDelete).toBe(false);
  });
});

describe("cloud-init user data", () => {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-cloudinit-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes `cloud-init schema` from Debian's cloud-init package", () => {
    const file = join(dir, "user-data.yaml");
    writeFileSync(file, cloudInitUserData("vol-0123456789abcdef0"));
    const res = spawnSync("cloud-init", ["schema", "--config-file", file], { encoding: "utf8" });
    expect(res.error, "cloud-init is not installed (apt-get install cloud-init)").toBeUndefined();
    expect(`${res.stdout}${res.stderr}`).toMatch(/Valid cloud-config/i);
    expect(res.status).toBe(0);
  });

  it("`cloud-init schema` rejects a broken document (the check is real)", () => {
    const file = join(dir, "broken.yaml");
    writeFileSync(file, "#cloud-config\nruncmd: 42\npackage_update: maybe\n");
    const res = spawnSync("cloud-init", ["schema", "--config-file", file], { encoding: "utf8" });
    expect(res.status).not.toBe(0);
  });

  it("formats the data volume only when it has no filesystem, mounts it before Docker is installed", () => {
    const ud = cloudInitUserData("vol-0123456789abcdef0");
    expect(ud.startsWith("#cloud-config\n")).toBe(true);
    expect(ud).toContain("nvme-Amazon_Elastic_Block_Store_vol0123456789abcdef0");
    expect(ud).toMatch(/if ! blkid "\$dev" >\/dev\/null 2>&1; then mkfs\.ext4/);
    const order = ["rpcstack-mount-data", "docker.io", "enable", "usermod"].map((w) => ud.lastIndexOf(w));
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("the instance carries it, bound to the data volume's id", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const ud: string = run.one("aws:ec2/instance:Instance").inputs.userData;
    expect(ud).toBe(cloudInitUserData("rpcstack-host-data-id"));
  });
});

// Keep BIG_HOST in sight: the default mock host must fit every tier or the other tests test nothing.
it("the mock engine's default host fits every tier", () => {
  const out = Object.entries(BIG_HOST).map(([k, v]) => `${k}=${v}`).join("\n");
  for (const t of Object.values(TIERS)) expect(() => assertHostFits("mock", out, t, { installsDocker: false })).not.toThrow();
});
