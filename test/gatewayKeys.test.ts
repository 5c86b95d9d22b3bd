/**
 * Project keys changed live on the real HAProxy while every key has a client running: a key
 * added, one renamed and one revoked through the runtime API (cli/runtimeApi.ts applyKeys). Any
 * failed call of a key that was not revoked fails the test.
 */
import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { applyKeys, runtimeCommand } from "../cli/runtimeApi.js";
import { keyMap, type GatewayChain, type ProjectKey } from "../gateway/build.js";
import { eventually } from "./support/http.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const k = (name: string, c: string): ProjectKey => ({ name, key: `${c}${"Zq7".repeat(11)}` });
const [alice, bob, carol, dave] = [k("alice", "A"), k("bob", "B"), k("carol", "C"), k("dave", "D")];
const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
const chains = (u: Recorder): GatewayChain[] => [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: u.url, rpcWs: u.wsUrl } }];

/** One key's traffic the whole time: an HTTP call after another on a kept-alive connection, and a WebSocket doing the same. */
class Client {
  readonly http: number[] = [];
  ws = 0;
  wsClose?: { code: number; reason: string };
  private stopped = false;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  private readonly done: Promise<unknown>[];
  private socket?: WebSocket;
  private closed?: Promise<void>;

  constructor(private readonly g: RunningGateway, readonly key: ProjectKey) {
    this.done = [this.httpLoop(), this.wsLoop()];
  }

  call(): Promise<number> {
    return new Promise((resolve) => {
      const req = request({ host: "127.0.0.1", port: this.g.httpsPort, path: `/gateway/eth/rpc-http/${this.key.key}`, method: "POST", agent: this.agent, headers: { "Content-Type": "application/json" } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode!));
      });
      req.on("error", () => resolve(0));
      req.end(body);
    });
  }

  private async httpLoop() {
    while (!this.stopped) this.http.push(await this.call());
  }

  private async wsLoop() {
    const ws = new WebSocket(`wss://localhost:${this.g.httpsPort}/gateway/eth/rpc/${this.key.key}?secret=null`, { rejectUnauthorized: false });
    this.socket = ws;
    const closed = new Promise<void>((r) => ws.on("close", (code, reason) => ((this.wsClose = { code, reason: String(reason) }), r())));
    this.closed = closed;
    ws.on("error", () => {});
    await Promise.race([new Promise((r) => ws.on("open", r)), closed]);
    while (!this.stopped && !this.wsClose) {
      const answered = new Promise<boolean>((r) => (ws.once("message", () => r(true)), closed.then(() => r(false))));
      ws.send(body);
      if (await answered) this.ws++;
    }
  }

  failures() {
    return { http: this.http.filter((s) => s !== 200).length, wsClosed: this.wsClose };
  }

  async stop() {
    this.stopped = true;
    this.socket?.close(1000);
    await Promise.all([...this.done, this.closed]);
    this.agent.destroy();
  }
}

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
    const busy = (n: number, ...cs: Client[]) => eventually("calls under way", async () => cs.map((x) => Math.min(x.http.length, x.ws)), (v) => v.every((x) => x >= n), 30_000);
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
