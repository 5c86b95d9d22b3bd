/**
 * Host preflight: a script that reports what a machine has, and the pure check of that report
 * against a tier. The same script runs locally (local host) and over SSH (ssh host).
 */
import type { Tier } from "../config/index.js";
import { shellQuote } from "../services/shell.js";
import { OPEN_FILES_SCRIPT, fitConnections, parseOpenFiles, type DaemonOpenFiles } from "./openFiles.js";

/** Oldest Docker engine the package is tested against (named volumes, healthcheck start period). */
export const MIN_DOCKER_VERSION = [20, 10] as const;

/**
 * Prints key=value lines. Free disk is measured where Docker keeps its data (its root dir when
 * Docker is installed, else the nearest existing parent of /var/lib/docker).
 */
export const PREFLIGHT_SCRIPT = String.raw`set -eu
cores=$(nproc)
mem_kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
docker_version=""
data_path=/var/lib/docker
if command -v docker >/dev/null 2>&1; then
  docker_version=$(docker version --format '{{.Server.Version}}' 2>/dev/null || true)
  root=$(docker info --format '{{.DockerRootDir}}' 2>/dev/null || true)
  [ -n "$root" ] && data_path=$root
fi
probe=$data_path
while [ ! -d "$probe" ]; do probe=$(dirname "$probe"); done
disk_free_kib=$(df -Pk "$probe" | awk 'NR==2 {print $4}')
echo "cores=$cores"
echo "memory_kib=$mem_kib"
echo "disk_path=$data_path"
echo "disk_free_kib=$disk_free_kib"
echo "docker_version=$docker_version"
${OPEN_FILES_SCRIPT}`;

export interface HostFacts extends DaemonOpenFiles {
  readonly cores: number;
  readonly memoryKiB: number;
  readonly diskPath: string;
  readonly diskFreeKiB: number;
  /** Empty when Docker is not installed (or its daemon does not answer). */
  readonly dockerVersion: string;
}

/** The key=value lines of a report the preflight's shell prints. */
export const reportEntries = (stdout: string): Map<string, string> =>
  new Map(
    stdout
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.includes("="))
      .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)] as const),
  );

export function parsePreflight(stdout: string): HostFacts {
  const kv = reportEntries(stdout);
  const num = (k: string) => {
    const v = Number(kv.get(k));
    if (!kv.has(k) || !Number.isFinite(v)) throw new Error(`host preflight: no ${k} in its report:\n${stdout}`);
    return v;
  };
  return {
    cores: num("cores"),
    memoryKiB: num("memory_kib"),
    diskPath: kv.get("disk_path") ?? "",
    diskFreeKiB: num("disk_free_kib"),
    dockerVersion: kv.get("docker_version") ?? "",
    ...parseOpenFiles(kv),
  };
}

// "4 GB" machines report a little less as MemTotal (kernel, firmware): allow 10%.
const MEMORY_SLACK = 0.9;
const KIB_PER_GIB = 1024 * 1024;
const KIB_PER_GB = 1e9 / 1024;

export interface PreflightOptions {
  /** Whether a missing Docker is installed by the package (ssh) or is the operator's to install (local). */
  readonly installsDocker: boolean;
  /** The gateway's connections, where this host runs it: checked against, or when unset fitted to, the daemon's open-file limit. */
  readonly gateway?: { readonly maxConnections: number; readonly maxConnectionsSet: boolean };
}

/** Everything that keeps this host from carrying the tier, one sentence each; empty when it fits. */
export function preflightShortfalls(facts: HostFacts, tier: Tier, opts: Pick<PreflightOptions, "installsDocker">): string[] {
  const out: string[] = [];
  const label = tierLabel(tier);
  if (facts.cores < tier.cores) out.push(`host has ${facts.cores} cores, ${label} needs ${tier.cores}`);
  if (facts.memoryKiB < tier.memoryGiB * KIB_PER_GIB * MEMORY_SLACK) {
    out.push(`host has ${(facts.memoryKiB / KIB_PER_GIB).toFixed(1)} GiB memory, ${label} needs ${tier.memoryGiB} GB`);
  }
  if (facts.diskFreeKiB < tier.diskGB * KIB_PER_GB) {
    out.push(
      `host has ${Math.floor(facts.diskFreeKiB / KIB_PER_GB)} GB free on ${facts.diskPath}, ${label} needs ${tier.diskGB} GB`,
    );
  }
  if (!facts.dockerVersion) {
    if (!opts.installsDocker) out.push("Docker is not installed or its daemon is not running (install Docker Engine and start it)");
  } else if (!dockerVersionOk(facts.dockerVersion)) {
    out.push(`host runs Docker ${facts.dockerVersion}, the package needs ${MIN_DOCKER_VERSION.join(".")} or newer`);
  }
  return out;
}

/** "tier minimum", or "network devnet" for the trial chain's own requirements. */
const tierLabel = (tier: Tier) => (tier.name === "devnet" ? "network devnet" : `tier ${tier.name}`);

export function dockerVersionOk(version: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [maj, min] = [Number(m[1]), Number(m[2])];
  return maj > MIN_DOCKER_VERSION[0] || (maj === MIN_DOCKER_VERSION[0] && min >= MIN_DOCKER_VERSION[1]);
}

/** A host the stack cannot use: what the preflight found, as the operator reads it (no stack trace). */
export class HostUnfit extends Error {}

/** A host that passed its preflight: its facts, and the gateway's connections when it runs the gateway. */
export interface HostVerdict {
  readonly facts: HostFacts;
  readonly maxConnections?: number;
  /** One line saying the connections figure, when it was not set. */
  readonly note?: string;
}

/** Throws one HostUnfit naming every shortfall; returns the verdict when the host fits. */
export function assertHostFits(hostLabel: string, stdout: string, tier: Tier, opts: PreflightOptions): HostVerdict {
  const facts = parsePreflight(stdout);
  const short = preflightShortfalls(facts, tier, opts);
  const fit = opts.gateway && fitConnections(opts.gateway, facts, hostLabel);
  if (fit && "problem" in fit) {
    if (!short.length) throw new HostUnfit(`rpcstack: ${fit.problem}`);
    short.push(fit.problem);
  }
  if (short.length) {
    throw new HostUnfit(`rpcstack: ${hostLabel} is too small or not ready for ${tierLabel(tier)}:\n  ${short.join("\n  ")}`);
  }
  return fit ? { facts, ...fit } : { facts };
}

/** The tier a host is checked against: host.diskGB stands for the tier's disk (preflight, volume size). */
export const hostTier = (tier: Tier, diskGB: number | undefined): Tier => (diskGB === undefined ? tier : { ...tier, diskGB });

/** ssh options shared by everything the package runs on an ssh host and its Docker provider: the same client, the same trust. */
export const SSH_OPTIONS = ["-o", "StrictHostKeyChecking=accept-new"] as const;

/** Where an ssh host is reached. */
export interface SshTarget {
  readonly user: string;
  readonly address: string;
  readonly port: number;
}

/**
 * `ssh` with this machine's client, as the Docker provider connects, running `remote` there:
 * BatchMode, so a missing key fails instead of asking. `-n` when the remote command reads no input.
 */
export function sshCommand(to: SshTarget, remote: readonly string[], opts: { stdin: boolean }): string {
  const args = ["ssh", ...(opts.stdin ? [] : ["-n"]), "-o", "BatchMode=yes", ...SSH_OPTIONS, "-p", String(to.port), `${to.user}@${to.address}`];
  // ssh hands the server's shell one string made of the remote words: quote them for that shell
  // too, or a word with a space in it splits there.
  return [...args, remote.map(shellQuote).join(" ")].map(shellQuote).join(" ");
}

/** The command that runs PREFLIGHT_SCRIPT (given on stdin) on an ssh host. */
export function sshPreflightCommand(user: string, address: string, port: number): string {
  // ssh's own complaint and exit status go into the report, for sshProblem to name.
  return `${sshCommand({ user, address, port }, ["sh", "-s"], { stdin: true })} 2>&1; echo "ssh_exit=$?"`;
}

/** Why the ssh preflight did not run (the ssh client's last words), or undefined when it did. */
export function sshProblem(stdout: string): string | undefined {
  const exit = /^ssh_exit=(\d+)$/m.exec(stdout)?.[1];
  if (exit === undefined || exit === "0") return undefined;
  const said = stdout.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("ssh_exit=")).pop();
  return `ssh exited ${exit}${said ? `: ${said}` : ""}`;
}

/**
 * Makes Docker usable by the ssh user: a no-op when it already is (the Docker provider needs no
 * more), else installs it from the distribution's packages when absent and adds the user to the
 * docker group, with sudo (said plainly when there is none the user may use).
 */
export const INSTALL_DOCKER_SCRIPT = String.raw`set -eu
if command -v docker >/dev/null 2>&1 && docker version >/dev/null 2>&1; then exit 0; fi
if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
  echo "rpcstack: $(id -un) cannot use Docker on this server and cannot sudo without a password to set it up: install Docker Engine and add $(id -un) to the docker group, or allow it sudo" >&2
  exit 1
fi
if ! command -v docker >/dev/null 2>&1 || ! sudo docker version >/dev/null 2>&1; then
  sudo DEBIAN_FRONTEND=noninteractive apt-get update -q
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io
  sudo systemctl enable --now docker
fi
sudo usermod -aG docker "$(id -un)"
`;
