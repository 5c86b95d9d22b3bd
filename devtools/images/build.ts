/**
 * Builds the end-to-end test's images without a registry: a Debian bookworm base from
 * debootstrap, Debian's certbot and Node.js on it, the HAProxy release the gateway pins (the
 * binary the other tests run), geth and Starknet Devnet built from their registries
 * (scripts/clients/build.sh), and stand-ins for the clients that cannot be built here. Each image
 * is tagged with a hash of what went into it, so a machine that keeps its images builds each
 * once; a changed binary, stand-in, Dockerfile or flag fixture gets a new tag.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { IMAGES } from "../../config/index.js";
import { DEVNET_IMAGES, GATEWAY_IMAGES, MONITORING_IMAGES } from "../../config/networks/images.js";
import { parseImageRef } from "../../config/versions.js";
import { clientBinary } from "../clients.js";
import { haproxyBinary } from "../haproxy.js";
import { withImageLock } from "./lock.js";

const HERE = __dirname;
const ROOT = resolve(HERE, "../..");
/** debootstrap's variant, suite and mirror: the base image's whole recipe (its tag hashes them). */
const BASE = { variant: "--variant=minbase", suite: "bookworm", mirror: "http://deb.debian.org/debian" } as const;
const baseRecipe = (suite: string) => `debootstrap ${BASE.variant} ${suite} ${BASE.mirror}`;
export const STANDIN_CLIENTS = ["lighthouse", "juno", "pathfinder"] as const;

export interface TestImages {
  readonly node: string;
  readonly haproxy: string;
  readonly certbot: string;
  /** Prometheus at the pin, built from its Go module, at the official image's paths (monitoring, on for ssh and aws hosts). */
  readonly prometheus: string;
  /** Debian's Redis under Valkey's command names: a cluster's counter store (`host.counterStoreImage`). */
  readonly valkey: string;
  /** geth at the pin, built from its Go module: the L1 execution client of every network. */
  readonly geth: string;
  readonly lighthouse: string;
  readonly juno: string;
  readonly pathfinder: string;
  /** The devnet network's L2: Starknet Devnet at the pin, built from crates.io. */
  readonly starknetDevnet: string;
  /** A Devnet stand-in staying at its genesis block: a node that never syncs. */
  readonly starknetDevnetStalled: string;
}

export const docker = (args: string[], input?: Buffer | string) =>
  execFileSync("docker", args, { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"], maxBuffer: 64 << 20, env: { ...process.env, DOCKER_BUILDKIT: "0" } }).trim();

export const imageExists = (ref: string) => {
  try {
    docker(["image", "inspect", "--format", "{{.Id}}", ref]);
    return true;
  } catch {
    return false;
  }
};

function hashDir(dir: string, h = createHash("sha256"), base = dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const st = statSync(p);
    h.update(relative(base, p) + "\0" + (st.mode & 0o111 ? "x" : "-") + "\0");
    if (st.isDirectory()) hashDir(p, h, base);
    else h.update(readFileSync(p));
  }
  return h;
}

/**
 * A Debian base image: debootstrap of `suite` into a temporary root, then `docker import` as
 * `<repo>:<suite>-<hash>` (the end-to-end test's bookworm; other tests keep theirs under their own
 * repository, which the end-to-end test's clean-up leaves alone).
 */
export function debianBase(log: (s: string) => void, suite: string = BASE.suite, repo = "rpcstack-e2e/debian"): string {
  const ref = `${repo}:${suite}-${createHash("sha256").update(baseRecipe(suite)).digest("hex").slice(0, 12)}`;
  if (imageExists(ref)) return ref;
  const t0 = Date.now();
  const rootfs = mkdtempSync(join(tmpdir(), "rpcstack-e2e-rootfs-"));
  try {
    execFileSync("debootstrap", [BASE.variant, suite, rootfs, BASE.mirror], { stdio: "pipe", maxBuffer: 64 << 20 });
    const tar = execFileSync("tar", ["-C", rootfs, "-c", "."], { maxBuffer: 1 << 30 });
    docker(["import", "-", ref], tar);
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
  log(`built ${ref} in ${Math.round((Date.now() - t0) / 1000)} s`);
  return ref;
}

/** Builds each target of one Dockerfile over `context`, tagged `<repo>/<target>:<tagPrefix><hash>`. */
export function buildTargets(
  dockerfile: string,
  context: string,
  buildArgs: Record<string, string>,
  targets: Record<string, string>,
  log: (s: string) => void,
  repo = "rpcstack-e2e",
  dockerArgs: readonly string[] = [],
): Record<string, string> {
  const h = hashDir(context).update(readFileSync(join(HERE, dockerfile)));
  for (const [k, v] of Object.entries(buildArgs)) h.update(`${k}=${docker(["image", "inspect", "--format", "{{.Id}}", v])}`);
  const hash = h.digest("hex").slice(0, 12);
  const out: Record<string, string> = {};
  for (const [target, tagPrefix] of Object.entries(targets)) {
    const ref = `${repo}/${target}:${tagPrefix}${hash}`;
    out[target] = ref;
    if (imageExists(ref)) continue;
    const t0 = Date.now();
    const args = Object.entries(buildArgs).flatMap(([k, v]) => ["--build-arg", `${k}=${v}`]);
    docker(["build", "-q", ...dockerArgs, "-f", join(HERE, dockerfile), "--target", target, ...args, "-t", ref, context]);
    log(`built ${ref} in ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  return out;
}

/** Older builds of the same images (a stand-in changed since): untagged so the disk does not fill. */
function removeStale(current: readonly string[], log: (s: string) => void) {
  const keep = new Set(current);
  const stale = docker(["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference=rpcstack-e2e/*"]).split("\n").filter((r) => r && !keep.has(r));
  for (const ref of stale) {
    try {
      docker(["rmi", ref]);
      log(`removed the older ${ref}`);
    } catch {
      // Still used by a container of another run: left for a later run.
    }
  }
}

/** Packages the stand-ins run from the project's node_modules: ws and its closure. */
function nodeModulesClosure(): string[] {
  const seen = new Set<string>();
  const resolveDep = (name: string, from: string): string | undefined => {
    for (let d = from; ; ) {
      const p = join(d, "node_modules", name);
      if (existsSync(p)) return p;
      const up = dirname(d);
      if (up === d) return undefined;
      d = up.endsWith("node_modules") ? dirname(up) : up;
    }
  };
  const walk = (dir: string) => {
    if (seen.has(dir)) return;
    seen.add(dir);
    const pj = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    for (const dep of Object.keys({ ...pj.dependencies, ...pj.optionalDependencies })) {
      const r = resolveDep(dep, dir);
      if (r) walk(r);
    }
  };
  walk(join(ROOT, "node_modules/ws"));
  const top = join(ROOT, "node_modules") + "/";
  // Nested packages come along with the package that holds them.
  return [...seen].map((p) => relative(top, p)).filter((p) => !p.includes("node_modules"));
}

/** The stand-in tag starts with the pinned client's version, which decides its flags. */
const versionPrefix = (image: string) => `${parseImageRef(image).tag}-standin-`;

/** Debian's Node.js and certbot, and the pinned HAProxy, on the debootstrap base: what every stand-in builds on. */
export function buildDebianImages(log: (s: string) => void = console.log): { readonly base: string; readonly node: string; readonly haproxy: string; readonly certbot: string; readonly valkey: string } {
  return withImageLock(() => debianImages(log), log);
}

function debianImages(log: (s: string) => void): { readonly base: string; readonly node: string; readonly haproxy: string; readonly certbot: string; readonly valkey: string } {
  const base = debianBase(log);
  const debianCtx = mkdtempSync(join(tmpdir(), "rpcstack-e2e-ctx-"));
  try {
    // The unpacked tree (binary, its loader and libraries), and the path it must sit at.
    const root = resolve(haproxyBinary(), "../../..");
    cpSync(root, join(debianCtx, "haproxy/root"), { recursive: true, verbatimSymlinks: true });
    writeFileSync(join(debianCtx, "haproxy/prefix"), root);
    const release = parseImageRef(GATEWAY_IMAGES.haproxy).tag ?? "unpinned";
    const built = buildTargets("debian.Dockerfile", debianCtx, { BASE: base }, { node: "18-", haproxy: `${release}-`, certbot: "2.1-", valkey: "redis7.0-" }, log);
    return { base, node: built.node, haproxy: built.haproxy, certbot: built.certbot, valkey: built.valkey };
  } finally {
    rmSync(debianCtx, { recursive: true, force: true });
  }
}

export function buildTestImages(log: (s: string) => void = console.log): TestImages {
  return withImageLock(() => testImages(log), log);
}

function testImages(log: (s: string) => void): TestImages {
  const { base, ...debian } = buildDebianImages(log);
  const standinCtx = mkdtempSync(join(tmpdir(), "rpcstack-e2e-ctx-"));
  const clientCtx = mkdtempSync(join(tmpdir(), "rpcstack-e2e-ctx-"));
  try {
    cpSync(clientBinary("geth", log), join(clientCtx, "geth"));
    cpSync(clientBinary("starknet-devnet", log), join(clientCtx, "starknet-devnet"));
    cpSync(clientBinary("prometheus", log), join(clientCtx, "prometheus"));
    const clients = buildTargets(
      "clients.Dockerfile",
      clientCtx,
      { BASE: base },
      { geth: `${parseImageRef(IMAGES.geth).tag}-`, "starknet-devnet": `${parseImageRef(DEVNET_IMAGES.starknetDevnet).tag}-`, prometheus: `${parseImageRef(MONITORING_IMAGES.prometheus).tag}-` },
      log,
    );
    cpSync(join(HERE, "standins"), join(standinCtx, "standins"), { recursive: true });
    // The devnet stand-ins the unit tests run on loopback, reused as the containers' entrypoints.
    cpSync(join(ROOT, "test/support/standins"), join(standinCtx, "standins"), { recursive: true });
    for (const pkg of nodeModulesClosure()) cpSync(join(ROOT, "node_modules", pkg), join(standinCtx, "node_modules", pkg), { recursive: true });
    mkdirSync(join(standinCtx, "flags"));
    for (const client of STANDIN_CLIENTS) {
      const fixture = join(ROOT, "test/fixtures/flags", `${client}.json`);
      if (existsSync(fixture)) cpSync(fixture, join(standinCtx, "flags", `${client}.json`));
      else log(`NOTE: ${relative(ROOT, fixture)} does not exist: the ${client} stand-in will not check its flag or variable names`);
    }
    const standins = buildTargets(
      "standins.Dockerfile",
      standinCtx,
      { NODE: debian.node },
      { lighthouse: versionPrefix(IMAGES.lighthouse), juno: versionPrefix(IMAGES.juno), pathfinder: versionPrefix(IMAGES.pathfinder),
        "starknet-devnet-stalled": versionPrefix(DEVNET_IMAGES.starknetDevnet) },
      log,
    );
    const images = { node: debian.node, haproxy: debian.haproxy, certbot: debian.certbot, prometheus: clients.prometheus, valkey: debian.valkey, geth: clients.geth, lighthouse: standins.lighthouse, juno: standins.juno, pathfinder: standins.pathfinder, starknetDevnet: clients["starknet-devnet"], starknetDevnetStalled: standins["starknet-devnet-stalled"] };
    removeStale([base, ...Object.values(images)], log);
    return images;
  } finally {
    rmSync(standinCtx, { recursive: true, force: true });
    rmSync(clientCtx, { recursive: true, force: true });
  }
}

if (require.main === module) console.log(JSON.stringify(buildTestImages(), null, 2));
