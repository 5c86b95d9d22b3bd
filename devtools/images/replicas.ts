/**
 * The fault run's images (standins/replica.js): geth and Juno replicas of one chain, and the
 * chain source they follow, on the end-to-end test's Node.js image. Tagged by the pinned client's
 * release (which the stack's rules read) and a hash of what went in, under their own repository
 * so the end-to-end test's clean-up of older images leaves them alone.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { execFileSync } from "node:child_process";
import { IMAGES } from "../../config/index.js";
import { parseImageRef } from "../../config/versions.js";
import { buildDebianImages, buildTargets } from "./build.js";
import { withImageLock } from "./lock.js";

const HERE = __dirname;
const ROOT = resolve(HERE, "../..");
export const REPLICA_REPOSITORY = "rpcstack-replica";
const FILES = ["lib.js", "replica.js", "geth-replica.js", "juno-replica.js", "chain-source.js", "lighthouse.js"];

export interface ReplicaImages {
  readonly geth: string;
  readonly juno: string;
  readonly source: string;
  /** The Lighthouse stand-in each geth replica pairs with. */
  readonly lighthouse: string;
  /** Debian's Node.js, HAProxy and certbot, kept under this repository too (keepImage). */
  readonly node: string;
  readonly haproxy: string;
  readonly certbot: string;
}

export function buildReplicaImages(log: (s: string) => void = console.log): ReplicaImages {
  return withImageLock(() => replicaImages(log), log);
}

function replicaImages(log: (s: string) => void): ReplicaImages {
  const debian = buildDebianImages(log);
  const nodeImage = debian.node;
  const ctx = mkdtempSync(join(tmpdir(), "rpcstack-replica-ctx-"));
  try {
    mkdirSync(join(ctx, "standins"));
    for (const f of FILES) cpSync(join(HERE, "standins", f), join(ctx, "standins", f));
    // ws has no dependencies of its own.
    cpSync(join(ROOT, "node_modules/ws"), join(ctx, "node_modules/ws"), { recursive: true });
    mkdirSync(join(ctx, "flags"));
    for (const client of ["geth", "juno", "lighthouse"]) cpSync(join(ROOT, "test/fixtures/flags", `${client}.json`), join(ctx, "flags", `${client}.json`));
    const tag = (image: string) => `${parseImageRef(image).tag}-replica-`;
    const built = buildTargets(
      "replicas.Dockerfile", ctx, { NODE: nodeImage },
      { "geth-replica": tag(IMAGES.geth), "juno-replica": tag(IMAGES.juno), "chain-source": "", lighthouse: tag(IMAGES.lighthouse) },
      log, REPLICA_REPOSITORY,
      // The build's RUN steps reach Debian's mirror through the host's network, not the engine's
      // default bridge, which a shared engine may have lost (docker0 removed under a running daemon).
      ["--network", "host"],
    );
    const own = { geth: built["geth-replica"], juno: built["juno-replica"], source: built["chain-source"], lighthouse: built.lighthouse };
    removeOlder(Object.values(own), log);
    return { ...own, node: keepImage(debian.node), haproxy: keepImage(debian.haproxy), certbot: keepImage(debian.certbot) };
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

/**
 * The same image under this repository too: the end-to-end test's clean-up of older images (of
 * any worktree sharing the engine) then only untags its own name, and a run keeps what it uses.
 */
export function keepImage(image: string): string {
  const kept = `${REPLICA_REPOSITORY}/${image.slice(image.indexOf("/") + 1)}`;
  execFileSync("docker", ["tag", image, kept]);
  return kept;
}

/** A new tag of the same image: what a rollout of "a new node image" deploys. */
export function nextTag(image: string, suffix = "next"): string {
  const ref = parseImageRef(image);
  const next = `${image.slice(0, image.lastIndexOf(":"))}:${ref.tag}-${suffix}`;
  execFileSync("docker", ["tag", image, next]);
  return next;
}

/** Older builds of these images, untagged so the disk does not fill (ones in use stay). */
function removeOlder(current: readonly string[], log: (s: string) => void) {
  const keep = new Set(current);
  const repos = new Set(current.map((r) => r.slice(0, r.lastIndexOf(":"))));
  const all = execFileSync("docker", ["images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", `reference=${REPLICA_REPOSITORY}/*`], { encoding: "utf8" })
    .split("\n")
    .filter((r) => r && repos.has(r.slice(0, r.lastIndexOf(":"))));
  for (const ref of all.filter((r) => !keep.has(r) && ![...keep].some((k) => r.startsWith(`${k}-`)))) {
    try {
      execFileSync("docker", ["rmi", ref], { stdio: "pipe" });
      log(`removed the older ${ref}`);
    } catch {
      // Used by a container of another run.
    }
  }
}

