/**
 * gateway.maxConnections against the Docker daemon's open-file limit: unset on a local or ssh host
 * it is what the daemon lets the gateway container open, said in one line; set too high it stops
 * the program before anything is registered, naming the figure that fits and how to raise the limit.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { describe, expect, it, vi } from "vitest";
import { OPEN_FILES_SCRIPT, containerOpenFiles, fitConnections, parseOpenFiles } from "../hosts/openFiles.js";
import { reportEntries } from "../hosts/preflight.js";
import { ROOT, runProgram, type RunOptions } from "./harness.js";

const unset = { maxConnections: 20000, maxConnectionsSet: false };
const set = (n: number) => ({ maxConnections: n, maxConnectionsSet: true });
// This CI's kind: a daemon without CAP_SYS_RESOURCE whose hard limit is 20000.
const capped = { dockerNofile: 20000, dockerNofileRaise: false, nrOpen: 1048576 };

describe("what the daemon lets the gateway container open (pure)", () => {
  it("the daemon's hard limit, or fs.nr_open where it may raise limits (root with CAP_SYS_RESOURCE); unknown stays unknown", () => {
    expect(containerOpenFiles(capped)).toBe(20000);
    expect(containerOpenFiles({ ...capped, dockerNofileRaise: true })).toBe(1048576);
    expect(containerOpenFiles({})).toBeUndefined();
  });

  it("unset: the default lowered to what fits (2 per connection + 1024), said in one line", () => {
    const fit = fitConnections(unset, capped, "this machine");
    expect(fit).toEqual({
      maxConnections: 9488,
      note: "rpcstack:gateway.maxConnections is not set: 9488, what fits (this machine's Docker daemon lets a container open 20000 files; 2 per connection + 1024; the default is 20000)",
    });
    expect(fitConnections(unset, { ...capped, dockerNofileRaise: true }, "h")).toMatchObject({ maxConnections: 20000, note: expect.stringContaining("20000, the default") });
    expect(fitConnections(unset, {}, "h")).toMatchObject({ maxConnections: 20000, note: expect.stringContaining("did not show its open-file limit") });
  });

  it("set: kept when it fits, refused in one line naming the figure that fits and both ways to raise the limit", () => {
    expect(fitConnections(set(9488), capped, "h")).toEqual({ maxConnections: 9488 });
    const refused = fitConnections(set(9489), capped, "this machine");
    expect("problem" in refused && refused.problem).toBe(
      "rpcstack:gateway.maxConnections 9489 needs 20002 open files in the gateway container (2 per connection + 1024), and this machine's Docker daemon lets a container open 20000 files: " +
        "set it to 9488 or less (or unset it: then it is what fits), or raise the daemon's open-file limit: for a daemon systemd runs, `sudo systemctl edit docker`, add `[Service]` and `LimitNOFILE=1048576`, then `sudo systemctl restart docker`; " +
        "for a daemon started by hand, stop it and start it again from a root shell after `ulimit -Hn 1048576; ulimit -Sn 1048576`",
    );
    expect("problem" in refused && refused.problem).not.toContain("\n");
  });

  it("a daemon too tight for the least 100 connections is refused even when unset", () => {
    expect(fitConnections(unset, { dockerNofile: 1200 }, "h")).toMatchObject({ problem: expect.stringContaining("too few for the gateway's least 100 connections") });
  });
});

describe("the open-file lines of the preflight, run for real on this machine", () => {
  it("report the running dockerd's hard limit and whether it may raise it, as /proc shows them", () => {
    const facts = parseOpenFiles(reportEntries(execFileSync("/bin/sh", ["-c", OPEN_FILES_SCRIPT], { encoding: "utf8" })));
    expect(facts.nrOpen).toBe(Number(readFileSync("/proc/sys/fs/nr_open", "utf8")));
    const pid = spawnSync("pidof", ["dockerd"], { encoding: "utf8" }).stdout.trim().split(" ")[0];
    if (!pid || !existsSync(`/proc/${pid}/limits`)) {
      expect(facts.dockerNofile).toBeUndefined();
      return;
    }
    const hard = /^Max open files\s+\S+\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))![1];
    expect(facts.dockerNofile).toBe(hard === "unlimited" ? undefined : Number(hard));
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const root = /^Uid:\s+\d+\s+(\d+)/m.exec(status)![1] === "0";
    const sysResource = (BigInt(`0x${/^CapEff:\s+(\w+)/m.exec(status)![1]}`) >> 24n) & 1n;
    expect(facts.dockerNofileRaise).toBe(root && sysResource === 1n);
  });
});

async function deploy(opts: RunOptions) {
  const said: string[] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...xs: unknown[]) => void said.push(xs.join(" ")));
  try {
    return { run: await runProgram(opts), said };
  } finally {
    spy.mockRestore();
  }
}

const CONTAINER = "docker:index/container:Container";
const gatewayOf = (run: Awaited<ReturnType<typeof runProgram>>) => run.one(CONTAINER, "rpcstack-gateway-haproxy");

describe("the program under the mock engine", () => {
  it("local, unset: the gateway gets what the daemon allows (ulimit and HAProxy's maxconn), and the figure is said", async () => {
    const { run, said } = await deploy({ stack: "local", hostFacts: { docker_nofile: 20000, docker_nofile_raise: 0 } });
    expect(run.error).toBeUndefined();
    expect(gatewayOf(run).inputs.ulimits).toEqual([{ name: "nofile", soft: 20000, hard: 20000 }]);
    expect(JSON.stringify(gatewayOf(run).inputs.uploads)).toContain("maxconn 9488");
    expect(said.filter((l) => l.includes("gateway.maxConnections"))).toEqual([expect.stringContaining("rpcstack: rpcstack:gateway.maxConnections is not set: 9488, what fits")]);
  });

  it("local, set too high: refused before anything is registered, with the figure that fits", async () => {
    const { run } = await deploy({ stack: "local", config: { gateway: { maxConnections: 15000 } }, hostFacts: { docker_nofile: 20000 } });
    expect(run.error?.message).toMatch(/^rpcstack: rpcstack:gateway\.maxConnections 15000 needs 31024 open files .* set it to 9488 or less/);
    expect(run.resources).toEqual([]);
  });

  it("ssh, unset: fitted to the server's daemon, read over ssh", async () => {
    const { run } = await deploy({ stack: "testnet", hostFacts: { docker_nofile: 40000, docker_nofile_raise: 0 } });
    expect(run.error).toBeUndefined();
    expect(gatewayOf(run).inputs.ulimits).toEqual([{ name: "nofile", soft: 40000, hard: 40000 }]);
  });
});

describe("npm run export of the local stack", () => {
  it("fits the gateway to this machine's Docker daemon as pulumi up does, and says the figure", () => {
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-export-nofile-"));
    try {
      writeFileSync(join(dir, "keys.json"), JSON.stringify([{ name: "team", key: "Zq3vX9kLmP2wR7tY5uB8nC1dF4gH6jK0aS" }]));
      const r = spawnSync("npx", ["tsx", "export/cli.ts", "--stack", "local", "--keys-file", join(dir, "keys.json"), "--out", join(dir, "out")], { cwd: ROOT, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      const fit = fitConnections(unset, parseOpenFiles(reportEntries(execFileSync("/bin/sh", ["-c", OPEN_FILES_SCRIPT], { encoding: "utf8" }))), "this machine");
      if ("problem" in fit) throw new Error(fit.problem);
      expect(r.stdout).toContain(fit.note);
      const haproxy = parse(readFileSync(join(dir, "out/dc-gateway.yaml"), "utf8")).services.haproxy;
      expect(haproxy.ulimits.nofile).toEqual({ soft: 2 * fit.maxConnections + 1024, hard: 2 * fit.maxConnections + 1024 });
      expect(readFileSync(join(dir, "out/gateway/haproxy.cfg"), "utf8")).toContain(`maxconn ${fit.maxConnections}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
