/**
 * Every command the package ships answers --help with its usage and exit 0, and an unknown flag
 * with a message naming it and exit 2, doing nothing else. (The export CLI has its own test.)
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";

const TSX = join(ROOT, "node_modules/.bin/tsx");
const COMMANDS = [
  { name: "rpcstack-ready (npm run ready)", file: "readiness/cli.ts", prefix: "rpcstack-ready: " },
  { name: "the disk watcher (rpcstack-disk)", file: "readiness/diskWatch.ts", prefix: "rpcstack-disk: " },
  { name: "the smoke runner", file: "smoke/cli.ts", prefix: "rpcstack smoke: " },
  { name: "npm run up", file: "scripts/up.ts", prefix: "rpcstack up: " },
];

const run = (file: string, args: string[]) =>
  // An empty environment for the smoke runner's variables, and no Docker or Pulumi is reached:
  // both answers come before any work.
  spawnSync(TSX, [join(ROOT, file), ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000, env: { PATH: process.env.PATH, HOME: process.env.HOME } });

describe.each(COMMANDS)("$name", ({ file, prefix }) => {
  it("--help prints the usage on stdout and exits 0", () => {
    const r = run(file, ["--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: /);
    expect(r.stdout).toMatch(/--help/);
    expect(r.stderr).toBe("");
  });

  it("an unknown flag is named on stderr, with the usage, exit 2", () => {
    const r = run(file, ["--no-such-flag"]);
    expect(r.status).toBe(2);
    expect(r.stderr.startsWith(`${prefix}unknown option --no-such-flag\n`) || r.stderr.startsWith(`${prefix}Unknown option '--no-such-flag'`)).toBe(true);
    expect(r.stderr).toContain("usage: ");
    expect(r.stdout).toBe("");
  });
});
