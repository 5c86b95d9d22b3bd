/** `npm run keys`: its arguments, and one key added, listed and revoked on a running gateway. */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runKeys } from "../cli/keys.js";
import { keyDigest, keyMap } from "../gateway/build.js";
import { GATEWAY_PATHS } from "../services/gateway.js";
import { makeFakePulumi } from "./support/fakePulumi.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { hostRequest } from "./support/http.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const alice = { name: "alice", key: "aLiCe_7Hq2Wm9Xz4Rk8Vb3Np6Ty1Gd5Js0" };

/** Runs the command in this process: its exit code and what it printed on each stream. */
async function keys(...argv: string[]) {
  const out: string[] = [], err: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((s) => void out.push(String(s)));
  const error = vi.spyOn(console, "error").mockImplementation((s) => void err.push(String(s)));
  try {
    return { code: await runKeys(argv), out: out.join("\n"), err: err.join("\n") };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

let dir: string;
let file: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rpcstack-keys-"));
  file = join(dir, "keys.json");
  writeFileSync(file, JSON.stringify([alice]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("npm run keys: arguments", () => {
  it("prints its usage with --help, and names what is wrong otherwise, exiting 2", async () => {
    expect(await keys("--help")).toMatchObject({ code: 0, out: expect.stringContaining("revoke NAME") });
    const cases: [string[], string][] = [
      [["--keys-file", file], "give a command"],
      [["add", "bob"], "give one of --stack or --keys-file"],
      [["add", "bob", "--keys-file", file, "--stack", "local"], "give one of --stack or --keys-file"],
      [["add", "bob", "--keys-file", file, "--frob"], "unknown option --frob"],
      [["grant", "bob", "--keys-file", file], "unknown command grant"],
      [["add", "--keys-file", file], "add takes a name (got 0 arguments)"],
      [["add", "alice", "--keys-file", file], "add alice: that name already has a key"],
      [["add", "bob smith", "--keys-file", file], "must be 1-64 letters"],
      [["add", "bob", "--key", "short", "--keys-file", file], "the key of bob must be 32 or more"],
      [["revoke", "bob", "--keys-file", file], "revoke bob: no key has that name"],
      [["rename", "alice", "--keys-file", file], "rename takes a name and the new name"],
      [["revoke", "alice", "--key", alice.key, "--keys-file", file], "--key goes with add only"],
      [["revoke", "alice", "--keys-file", file, "--up"], "--up goes with --stack"],
    ];
    for (const [argv, said] of cases) {
      const r = await keys(...argv);
      expect({ argv, code: r.code, said: r.err.includes(said) }).toEqual({ argv, code: 2, said: true });
      expect(r.err + r.out).not.toContain(alice.key);
    }
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual([alice]);
  });

  it("exits 1 saying why when the keys file cannot be read", async () => {
    const r = await keys("list", "--keys-file", join(dir, "missing.json"));
    expect(r).toMatchObject({ code: 1, err: expect.stringContaining("no such file or folder") });
  });
});

describe("npm run keys: on a running gateway", () => {
  let node: Recorder;
  let gw: RunningGateway;
  beforeAll(async () => {
    node = await startRecorder();
    gw = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url } }], [alice]);
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    await node?.stop();
  });

  it("adds a key, lists it live, and revokes it, each in one step: the keys file, the map file and the running map", async () => {
    const live = ["--keys-file", file, "--socket", join(gw.dir, "admin.sock"), "--map", join(gw.dir, "keys.map"), "--map-file", join(gw.dir, "keys.map")];
    const call = (key: string) => hostRequest(gw.httpsPort, "localhost", `/gateway/eth/rpc-http/${key}`, "POST", '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}').then((r) => r.status);
    const added = await keys("add", "bob", ...live);
    expect(added).toMatchObject({ code: 0, err: expect.stringContaining("added bob") });
    const bob = added.out.trim();
    expect(bob).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await call(bob)).toBe(200);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(gw.dir, "keys.map"), "utf8")).toBe(keyMap([alice, { name: "bob", key: bob }]));
    expect(await keys("list", ...live)).toMatchObject({ code: 0, out: "alice\tlive\nbob\tlive" });

    const revoked = await keys("revoke", "bob", ...live);
    expect(revoked).toMatchObject({ code: 0, out: "", err: expect.stringContaining("revoked bob") });
    expect(await call(bob)).toBe(401);
    expect(await call(alice.key)).toBe(200);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual([alice]);
    expect(readFileSync(join(gw.dir, "keys.map"), "utf8")).toBe(keyMap([alice]));
  }, 60_000);
});

describe("npm run keys: a gateway that refuses the change half-way", () => {
  it("saves nothing, undoes on the running map what it had taken, and says so; without --map it names the stack's map", async () => {
    const carol = { name: "carol", key: "cArOl_7Hq2Wm9Xz4Rk8Vb3Np6Ty1Gd5Js0X" };
    const both = join(dir, "both.json");
    writeFileSync(both, JSON.stringify([alice, carol]), { mode: 0o600 });
    // A runtime API whose map holds alice, carol and a stray key the keys' home does not know; it
    // takes every change but, when told to, refuses the second change of a step.
    const stray = keyDigest("a key nobody saved");
    let live = new Map([[keyDigest(alice.key), "alice"], [keyDigest(carol.key), "carol"], [stray, "stray"]]);
    let changes = 0;
    let refuseSecond = false;
    const asked: string[] = [];
    const sock = join(dir, "refusing.sock");
    const server = createServer((c) =>
      c.once("data", (d) => {
        const cmd = String(d).trim();
        asked.push(cmd.split(" ").slice(0, 3).join(" "));
        const [verb, , map, digest, name] = cmd.split(" ");
        if (verb === "show") return void c.end(map === GATEWAY_PATHS.keyMap ? [...live].map(([k, n], i) => `0x${i + 1} ${k} ${n}\n`).join("") : "Unknown map identifier. Please use #<id> or <file>.\n");
        if (refuseSecond && ++changes === 2) return void c.end("Out of memory error.\n");
        if (verb === "del") return void ((live = new Map([...live].filter(([k]) => k !== digest))), c.end(""));
        if (verb === "add" || verb === "set") return void ((live = new Map([...live, [digest, name]])), c.end(""));
        c.end("Unknown command.\n");
      }),
    );
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      // Revoking carol is two changes here (carol and the stray key go): the first is taken, the second refused.
      refuseSecond = true;
      const failed = await keys("revoke", "carol", "--keys-file", both, "--socket", sock);
      expect(failed.code).toBe(1);
      expect(failed.err).toMatch(/revoke carol: not saved, the gateway did not take it \(HAProxy refused the change of .* \(del map\): Out of memory error\.\); the running gateway is back as the saved keys say/);
      // The step's taken change was undone: the keys' home and the running map agree on alice and carol.
      expect(changes).toBeGreaterThan(2);
      expect(JSON.parse(readFileSync(both, "utf8"))).toEqual([alice, carol]);
      expect([...live.values()].sort()).toEqual(["alice", "carol"]);
      expect(asked.every((a) => a.includes(GATEWAY_PATHS.keyMap) || !a.includes("map")), `commands: ${asked}`).toBe(true);
      // Taken whole, the same step saves.
      refuseSecond = false;
      expect(await keys("revoke", "carol", "--keys-file", both, "--socket", sock)).toMatchObject({ code: 0 });
      expect(JSON.parse(readFileSync(both, "utf8"))).toEqual([alice]);
      expect([...live.values()]).toEqual(["alice"]);
    } finally {
      server.close();
    }
  });
});

describe("npm run keys: on a Pulumi stack", () => {
  it("reads projectKeys with pulumi config get, writes it back as a secret through standard input (never argv), then runs pulumi up", async () => {
    const root = mkdtempSync(join(tmpdir(), "rpcstack-keys-pulumi-"));
    const fake = makeFakePulumi(root, { stacks: ["mainnet"], config: { mainnet: { projectKeys: { value: JSON.stringify([alice]), secret: true } } } });
    const path = process.env.PATH;
    process.env.PATH = `${join(root, "bin")}:${path}`;
    try {
      const added = await keys("add", "bob", "--stack", "mainnet", "--up");
      expect(added.code, added.err).toBe(0);
      const bob = added.out.trim().split("\n")[0];
      const saved = fake.state().config.mainnet.projectKeys;
      expect(saved.secret).toBe(true);
      expect(JSON.parse(saved.value)).toEqual([alice, { name: "bob", key: bob }]);
      expect(fake.calls().map((c) => c.args.slice(0, 2).join(" "))).toEqual(["config get", "config set", "up --yes"]);
      expect(JSON.stringify(fake.calls())).not.toContain(bob);
      expect(await keys("list", "--stack", "mainnet")).toMatchObject({ code: 0, out: "alice\nbob" });
      expect(await keys("revoke", "carol", "--stack", "mainnet")).toMatchObject({ code: 2, err: expect.stringContaining("revoke carol: no key has that name") });
      const state = JSON.parse(readFileSync(join(root, "state.json"), "utf8"));
      state.config.mainnet.projectKeys.value = `[{"name":"x","key":"${alice.key}"`;
      writeFileSync(join(root, "state.json"), JSON.stringify(state));
      const broken = await keys("list", "--stack", "mainnet");
      expect(broken).toMatchObject({ code: 1, err: expect.stringContaining("projectKeys of stack mainnet is not JSON") });
      expect(broken.err).not.toContain(alice.key);
    } finally {
      process.env.PATH = path;
      rmSync(root, { recursive: true, force: true });
    }
  });
});
