/**
 * Project keys changed live on the real HAProxy while every key has a client running: a key
 * added, one renamed and one revoked through the runtime API (gateway/runtimeApi.ts applyKeys). Any
 * failed call of a key that was not revoked fails the test. The same through the key sync that
 * `pulumi up` runs (gateway/keys/sync.sh), which swaps the whole map in one commit.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyKeys, runtimeCommand } from "../gateway/runtimeApi.js";
import { keyMap, type GatewayChain, type ProjectKey } from "../gateway/build.js";
import { eventually } from "./support/http.js";
import { busy, Client } from "./support/keyClients.js";
import { runKeySync } from "./support/keySync.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { freePort } from "./support/net.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const k = (name: string, c: string): ProjectKey => ({ name, key: `${c}${"Zq7".repeat(11)}` });
const [alice, bob, carol, dave] = [k("alice", "A"), k("bob", "B"), k("carol", "C"), k("dave", "D")];
const chains = (u: Recorder): GatewayChain[] => [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: u.url, rpcWs: u.wsUrl } }];

let node: Recorder;
let gw: RunningGateway;
const clients: Client[] = [];
beforeAll(async () => {
  node = await startRecorder();
  // Every client calls from 127.0.0.1: the revoked key's 401s must not count as guesses against the others.
  gw = await startGateway(chains(node), [alice, bob, carol], { rateLimitPerSecond: 1_000_000, wrongKeysPerMinute: 0 });
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.stop()));
  await gw?.stop();
  await node?.stop();
});

describe("project keys changed live through the runtime API", () => {
  it("adds, renames and revokes keys under load: the others' calls and sockets never fail, the revoked key's next call is 401 and its socket closes saying why", async () => {
    const sync = (keys: ProjectKey[]) => applyKeys({ socket: join(gw.dir, "admin.sock"), mapPath: join(gw.dir, "keys.map"), mapFile: join(gw.dir, "keys.map"), keys });
    const [a, b, c] = [alice, bob, carol].map((key) => new Client(gw, key));
    clients.push(a, b, c);
    await busy(20, a, b, c);

    const added = await sync([alice, bob, carol, dave]);
    expect(added).toMatchObject({ added: ["dave"], revoked: [], renamed: [] });
    // In effect once the command returns: the very next call, no retry.
    const d = new Client(gw, dave);
    clients.push(d);
    expect(await d.call()).toBe(200);

    const renamed = await sync([alice, bob, { ...carol, name: "carol-pro" }, dave]);
    expect(renamed).toMatchObject({ added: [], revoked: [], renamed: ["carol -> carol-pro"] });
    expect(await c.call()).toBe(200);
    await busy(a.ws + 20, a, b, c, d);

    const revoked = await sync([alice, { ...carol, name: "carol-pro" }, dave]);
    expect(revoked).toMatchObject({ added: [], revoked: ["bob"], renamed: [] });
    expect(await b.call()).toBe(401);
    await eventually("bob's socket closed", async () => b.wsClose, (v) => v !== undefined);
    expect(b.wsClose).toEqual({ code: 1008, reason: "project key revoked" });
    await busy(Math.max(a.ws, c.ws, d.ws) + 20, a, c, d);

    await Promise.all(clients.map((x) => x.stop()));
    for (const x of [a, c, d]) expect({ key: x.key.name, ...x.failures() }).toEqual({ key: x.key.name, http: 0, wsClosed: { code: 1000, reason: "" } });
    // The map file the gateway starts from holds the same keys, as digests.
    expect(readFileSync(join(gw.dir, "keys.map"), "utf8")).toBe(keyMap([alice, { ...carol, name: "carol-pro" }, dave]));
    const shown = await runtimeCommand(join(gw.dir, "admin.sock"), `show map ${join(gw.dir, "keys.map")}`);
    expect(shown.trim().split("\n").map((l) => l.split(" ")[2]).sort()).toEqual(["alice", "carol-pro", "dave"]);
    expect(shown + readFileSync(join(gw.dir, "keys.map"), "utf8")).not.toContain(alice.key);
  }, 120_000);
});

describe("the key sync pulumi up runs (gateway/keys/sync.sh)", () => {
  it("swaps in the deployed map under load: a revoked key gets 401 and its socket closes, the others never fail, the map file is the deployed one", async () => {
    const own = await startRecorder();
    const port = await freePort();
    const g = await startGateway(chains(own), [alice, bob, carol], { rateLimitPerSecond: 1_000_000, wrongKeysPerMinute: 0, adminLoopbackPort: port });
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-keysync-"));
    const cs = [alice, bob, carol].map((key) => new Client(g, key));
    try {
      await busy(20, ...cs);
      const deployed = [alice, { ...carol, name: "carol-pro" }, dave];
      writeFileSync(join(dir, "keys.map"), keyMap(deployed));
      const run = await runKeySync({ KEY_MAP: join(g.dir, "keys.map"), DESIRED: join(dir, "keys.map"), ADMIN_PORT: String(port) });
      expect(run).toEqual({ code: 0, out: "key sync: 3 keys live: alice,carol-pro,dave\n" });
      const d = new Client(g, dave);
      cs.push(d);
      expect(await d.call()).toBe(200);
      expect(await cs[1].call()).toBe(401);
      await eventually("bob's socket closed", async () => cs[1].wsClose, (v) => v !== undefined);
      expect(cs[1].wsClose).toEqual({ code: 1008, reason: "project key revoked" });
      await busy(Math.max(cs[0].ws, cs[2].ws) + 20, cs[0], cs[2], d);
      await Promise.all(cs.map((x) => x.stop()));
      for (const x of [cs[0], cs[2], d]) expect({ key: x.key.name, ...x.failures() }).toEqual({ key: x.key.name, http: 0, wsClosed: { code: 1000, reason: "" } });
      expect(readFileSync(join(g.dir, "keys.map"), "utf8")).toBe(keyMap(deployed));
      const shown = await runtimeCommand(`127.0.0.1:${port}`, `show map ${join(g.dir, "keys.map")}`);
      expect(shown.trim().split("\n").map((l) => l.split(" ")[2]).sort()).toEqual(["alice", "carol-pro", "dave"]);
    } finally {
      await Promise.all(cs.map((x) => x.stop()));
      await g.stop();
      await own.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
