/**
 * The peers' binaries: built from their Go modules at a stated release, cached outside the checkout
 * by version (`$XDG_CACHE_HOME/rpcstack/bench-peers/<name>-<release>/`), or a prebuilt binary named
 * by an environment variable. Nothing is downloaded but Go modules.
 *
 * Neither project tags its releases in a form Go accepts, so each release is pinned as the
 * pseudo-version of its release commit: eRPC tags `0.1.2` (no `v`), and proxyd tags
 * `proxyd/v4.30.0`, a major version 4 for a module path without `/v4`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

export type PeerName = "erpc" | "proxyd";

export interface PeerRelease {
  readonly name: PeerName;
  /** The release as the project names it. */
  readonly release: string;
  readonly commit: string;
  readonly module: string;
  /** The Go module version of the release commit. */
  readonly version: string;
  /** Main package (or the release build's main file), relative to the module root. */
  readonly pkg: string;
  /** `-X` settings the project's own release build passes (its version shows in logs). */
  readonly ldflags: readonly string[];
  /** Environment variable that names a prebuilt binary instead. */
  readonly env: string;
}

export const PEER_RELEASES: Record<PeerName, PeerRelease> = {
  erpc: {
    name: "erpc",
    release: "0.1.2",
    commit: "803b67d8d5551275136c7ffca191060288f4ceb5",
    module: "github.com/erpc/erpc",
    version: "v0.0.0-20260805153732-803b67d8d555",
    pkg: "./cmd/erpc/main.go",
    ldflags: ["-X github.com/erpc/erpc/common.ErpcVersion=0.1.2", "-X github.com/erpc/erpc/common.ErpcCommitSha=803b67d8"],
    env: "RPCSTACK_BENCH_ERPC",
  },
  proxyd: {
    name: "proxyd",
    release: "v4.30.0",
    commit: "95d27e324eb6c558a269d051e7d34f746c8a87a5",
    module: "github.com/ethereum-optimism/infra/proxyd",
    version: "v0.0.0-20260727192410-95d27e324eb6",
    pkg: "./cmd/proxyd",
    ldflags: ["-X main.GitVersion=v4.30.0", "-X main.GitCommit=95d27e32"],
    env: "RPCSTACK_BENCH_PROXYD",
  },
};

export const cacheDir = (r: PeerRelease, env: NodeJS.ProcessEnv = process.env) =>
  join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "rpcstack", "bench-peers", `${r.name}-${r.release}`);

/** The `go build` of a downloaded module copy: the flags of the projects' own release builds, static. */
export function goBuildArgs(r: PeerRelease, out: string): string[] {
  return ["build", "-trimpath", "-ldflags", ["-s", "-w", ...r.ldflags].join(" "), "-o", out, r.pkg];
}

export interface PeerBinary {
  readonly path: string;
  /** Where it came from, for the bench's output. */
  readonly source: string;
}

/**
 * A binary given by the peer's environment variable, else the cached build of the stated release,
 * else a build from the Go module proxy now (minutes; `go` on PATH). A module the proxy will not
 * serve is an error that says so and names the variable for a prebuilt binary.
 */
export function peerBinary(r: PeerRelease, env: NodeJS.ProcessEnv = process.env): PeerBinary {
  const given = env[r.env];
  if (given) {
    if (!existsSync(given)) throw new Error(`${r.env}=${given}: no such file`);
    return { path: given, source: `${given} (from ${r.env}; stated release ${r.release}, commit ${r.commit.slice(0, 12)})` };
  }
  const dir = cacheDir(r, env);
  const bin = join(dir, r.name);
  const source = `built from Go module ${r.module}@${r.version} (release ${r.release}), cached in ${dir}`;
  if (existsSync(bin)) return { path: bin, source };

  const dl = spawnSync("go", ["mod", "download", "-json", `${r.module}@${r.version}`], { encoding: "utf8", env: { ...env, GOFLAGS: "-mod=mod" } });
  if (dl.error) throw new Error(`building ${r.name} needs Go on PATH (${dl.error.message}); or set ${r.env} to a prebuilt ${r.name} ${r.release}`);
  let info: { Dir?: string; Error?: string };
  try {
    info = JSON.parse(dl.stdout);
  } catch {
    throw new Error(`go mod download ${r.module}@${r.version} printed no module: ${dl.stderr.trim()}`);
  }
  if (info.Error || !info.Dir) {
    throw new Error(
      `${r.name} ${r.release} cannot be had from the Go module proxy: ${info.Error ?? dl.stderr.trim()}\n` +
        `Set ${r.env} to a ${r.name} ${r.release} binary to measure it (where its project publishes release binaries and images: docs/bench-peers.md, "Getting the peers").`,
    );
  }
  // The module cache is read-only, and a main module's replace directives (proxyd has one) apply
  // only when it is built as the main module: build in a writable copy.
  const src = mkdtempSync(join(tmpdir(), `rpcstack-${r.name}-src-`));
  try {
    cpSync(info.Dir, src, { recursive: true });
    execFileSync("chmod", ["-R", "u+w", src]);
    mkdirSync(dir, { recursive: true });
    console.log(`bench: building ${r.name} ${r.release} from ${r.module}@${r.version} (once; cached in ${dir})`);
    execFileSync("go", goBuildArgs(r, `${bin}.tmp`), { cwd: src, stdio: ["ignore", "inherit", "inherit"], env: { ...env, CGO_ENABLED: "0", GOFLAGS: "-mod=mod" } });
    chmodSync(`${bin}.tmp`, 0o755);
    renameSync(`${bin}.tmp`, bin);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  return { path: bin, source };
}

/** The version a peer binary reports: eRPC in its help, proxyd in its first log line. */
export function reportedVersion(name: PeerName, output: string): string | undefined {
  if (name === "erpc") return /^VERSION:\s*\n\s*(\S+)/m.exec(output)?.[1];
  return /"msg":"starting proxyd","version":"([^"]+)"/.exec(output)?.[1];
}

export function binaryVersion(name: PeerName, path: string): string | undefined {
  // proxyd exits at once without a config file, after logging its version.
  const r = spawnSync(path, name === "erpc" ? ["--help"] : [], { encoding: "utf8", timeout: 10_000 });
  return reportedVersion(name, `${r.stdout}${r.stderr}`);
}
