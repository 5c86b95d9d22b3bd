/**
 * Every command the package ships answers --help with its usage and exit 0, and an unknown flag
 * with a message naming it and exit 2, doing nothing else; a wrong value is named with what is wrong.
 * (The export CLI has its own tests, in compose.test.ts.)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { BENCH_DEFAULTS, parseBenchArgs } from "../bench/args.js";
import { main as diskMain } from "../readiness/diskWatch.js";
import { main as readyMain } from "../readiness/cli.js";
import { main as smokeMain } from "../smoke/cli.js";
import { ROOT } from "./harness.js";

const TSX = join(ROOT, "node_modules/.bin/tsx");
const COMMANDS = [
  { name: "rpcstack-ready (npm run ready)", file: "readiness/cli.ts", prefix: "rpcstack-ready: " },
  { name: "the disk watcher (rpcstack-disk)", file: "readiness/diskWatch.ts", prefix: "rpcstack-disk: " },
  { name: "the smoke runner", file: "smoke/cli.ts", prefix: "rpcstack smoke: " },
  { name: "npm run up", file: "scripts/up.ts", prefix: "rpcstack up: " },
  { name: "the badge service (rpcstack-badges)", file: "badges/serverMain.ts", prefix: "rpcstack-badges: " },
  { name: "the bench chain's maker", file: "bench/chain.ts", prefix: "bench/chain.ts: " },
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

/** What a command printed on stderr (and stdout) while `body` ran in this process, and its exit code. */
async function stderrOf(body: () => Promise<number> | number): Promise<{ code: number; stderr: string; stdout?: string }> {
  let stderr = "";
  let stdout = "";
  const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  try {
    const code = await body();
    return code === 2 ? { code, stderr } : { code, stderr, stdout };
  } finally {
    write.mockRestore();
    out.mockRestore();
  }
}

const RAW = /\n\s+at |node:internal|ENOENT|EADDRNOTAVAIL|ENOTFOUND|SyntaxError/;

describe("a wrong value for a flag is answered with what is wrong (exit 2), never a stack trace or a raw system error", () => {
  it("rpcstack-ready: a port out of range, an address this machine does not have, a data volume that is not there", async () => {
    const port = await stderrOf(() => readyMain(["--l2", "http://127.0.0.1:1", "--serve", "99999"]));
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('rpcstack-ready: --serve must be an integer 1-65535 (got "99999")');
    // 192.0.2.1 is TEST-NET-1: no machine has it.
    const host = await stderrOf(() => readyMain(["--l2", "http://127.0.0.1:1", "--serve", "18080", "--serve-host", "192.0.2.1", "--interval-seconds", "0.05"]));
    expect(host).toEqual({ code: 2, stderr: "rpcstack-ready: cannot serve on 192.0.2.1:18080 (--serve, --serve-host): no such address on this machine\n" });
    const disk = await stderrOf(() => readyMain(["--l2", "http://127.0.0.1:1", "--disk", "geth=/no/such/volume", "--report-only"]));
    expect(disk.stdout).toContain("rpcstack-ready: volume geth: cannot measure /no/such/volume (no such file or folder)\n");
    for (const r of [port, host, disk]) expect(r.stderr + (r.stdout ?? "")).not.toMatch(RAW);
  });

  it("rpcstack-disk: a volume that is not there, an address this machine does not have", async () => {
    const volume = await stderrOf(() => diskMain(["--volume", "geth=/no/such/volume", "--port", "0"]));
    expect(volume).toEqual({ code: 2, stderr: "rpcstack-disk: volume geth: cannot measure /no/such/volume (--volume): no such file or folder\n" });
    const host = await stderrOf(() => diskMain(["--volume", `tmp=${ROOT}`, "--host", "192.0.2.1", "--port", "18081"]));
    expect(host).toEqual({ code: 2, stderr: "rpcstack-disk: cannot serve on 192.0.2.1:18081 (--host, --port): no such address on this machine\n" });
  });

  it("the smoke runner: a base that is no URL, a plan that is not JSON or not a list of checks", async () => {
    const env = (over: Record<string, string>) => ({ RPCSTACK_SMOKE_BASE: "https://localhost:1", RPCSTACK_SMOKE_KEY: "k", RPCSTACK_SMOKE_PLAN: "[]", ...over });
    const cases: [Record<string, string>, string][] = [
      [{ RPCSTACK_SMOKE_BASE: "nope" }, 'RPCSTACK_SMOKE_BASE must be an http:// or https:// URL (got "nope")'],
      [{ RPCSTACK_SMOKE_PLAN: "{bad" }, "RPCSTACK_SMOKE_PLAN is not JSON"],
      [{ RPCSTACK_SMOKE_PLAN: "{}" }, "RPCSTACK_SMOKE_PLAN must be a non-empty JSON list of {chainId, path, iface, kind}"],
      [{ RPCSTACK_SMOKE_PLAN: '[{"x":1}]' }, 'RPCSTACK_SMOKE_PLAN[0] must be {chainId, path, iface: rpc-http|rest|rpc, kind: evm|starknet|cosmos} (got {"x":1})'],
    ];
    for (const [over, message] of cases) expect(await stderrOf(() => smokeMain([], env(over)))).toEqual({ code: 2, stderr: `rpcstack smoke: ${message}\n` });
    const missing = await stderrOf(() => smokeMain([], { RPCSTACK_SMOKE_BASE: "https://localhost:1" }));
    expect(missing.stderr).toMatch(/^rpcstack smoke: set RPCSTACK_SMOKE_KEY, RPCSTACK_SMOKE_PLAN\n/);
  });

  it("npm run bench: its options are checked before anything starts, one list for all of its scripts", () => {
    expect(parseBenchArgs(["--rounds", "abc"])).toEqual({ error: '--rounds must be a positive integer (got "abc")' });
    expect(parseBenchArgs(["--seconds", "0"])).toEqual({ error: '--seconds must be a positive integer (got "0")' });
    // wrk's -d takes whole seconds: a fraction would pass here and stop the bench after it started.
    expect(parseBenchArgs(["--cache-seconds", "1.5"])).toEqual({ error: '--cache-seconds must be a positive integer (got "1.5")' });
    expect(parseBenchArgs(["--ws-seconds", "0.5"])).toMatchObject({ "ws-seconds": 0.5 });
    expect(parseBenchArgs(["--variant", "notjson"])).toEqual({ error: '--variant must be a JSON list of ["search","replace"] pairs (got "notjson")' });
    expect(parseBenchArgs(["--frobnicate"])).toEqual({ error: "unknown option --frobnicate" });
    expect(parseBenchArgs(["--help"])).toBe("help");
    expect(parseBenchArgs([])).toMatchObject({ "block-seconds": 12 });
    expect(parseBenchArgs(["--block-seconds", "0"])).toEqual({ error: '--block-seconds must be a positive integer (got "0")' });
    expect(parseBenchArgs(["--cache-seconds", "4", "--seconds", "2", "--cases", "gateway,variant"])).toMatchObject({ "cache-seconds": 4, seconds: 2, rounds: 2, cases: ["gateway", "variant"] });
    // The options of the peers bench (npm run bench -- --cases peers) are in the same list, with its own defaults.
    expect(parseBenchArgs(["--cases", "peers", "--pin", "1"], { ...BENCH_DEFAULTS, rounds: 3 })).toMatchObject({ cases: ["peers"], pin: "1", rounds: 3 });
  });

  it.each([".ci/run", ".ci/lua"])("bash %s: --help says what it does and exits 0 without running anything; an argument exits 2", (script) => {
    // With no PATH: a script that did not stop at its arguments could start no real work.
    const bash = (arg: string) => spawnSync("/bin/bash", [join(ROOT, script), arg], { encoding: "utf8", env: { PATH: "" }, timeout: 20_000 });
    const help = bash("--help");
    expect(help.status).toBe(0);
    expect(help.stdout.length).toBeGreaterThan(40);
    const bad = bash("--frobnicate");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`takes no arguments (got '--frobnicate')`);
    expect(bad.stdout).toBe("");
  });

  it("bash scripts/kubernetes/build.sh: --help names each binary's release and exits 0; a bad argument exits 2; --print-path says where the cache keeps a binary; none of them builds", () => {
    const cache = mkdtempSync(join(tmpdir(), "rpcstack-kube-cache-"));
    try {
      const bash = (...args: string[]) => spawnSync("bash", [join(ROOT, "scripts/kubernetes/build.sh"), ...args], { encoding: "utf8", env: { ...process.env, RPCSTACK_CACHE: cache, GOPROXY: "off" }, timeout: 20_000 });
      const help = bash("--help");
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(/etcd +v3\.7\.3, module go\.etcd\.io\/etcd\/server\/v3/);
      expect(help.stdout).toMatch(/kube-apiserver +v1\.37\.2, module k8s\.io\/kubernetes/);
      expect(help.stdout).toMatch(/kubelet +v1\.37\.2, module k8s\.io\/kubernetes, \.\/cmd\/kubelet/);
      expect(help.stdout).toMatch(/containerd +v2\.4\.2, module github\.com\/containerd\/containerd\/v2/);
      expect(bash("--frobnicate")).toMatchObject({ status: 2, stderr: expect.stringContaining('unknown option "--frobnicate"') });
      expect(bash("kubectl")).toMatchObject({ status: 2, stderr: expect.stringContaining('unknown binary "kubectl" (binaries: etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy containerd') });
      expect(bash("--print-path", "etcd").stdout.trim()).toBe(join(cache, "kubernetes/etcd/v3.7.3/etcd"));
      expect(readdirSync(cache)).toEqual([]);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
