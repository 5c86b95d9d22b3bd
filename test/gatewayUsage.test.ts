/**
 * Usage per key on the real HAProxy (gateway/usage.ts): a known mix of calls over HTTP and
 * WebSocket, a refused body and calls past the key's rate; the st_usage table the usage keeper
 * reads then holds exactly those counts, under key names only.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { join } from "node:path";
import WebSocket from "ws";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually } from "./support/http.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const ALICE = "usage_Alice_Q4w8E2r6T0y3U7i1O5p9A4s8D2f";
const BOB = "usage_Bob_Z7x1C5v9B3n7M1q5W9e3R7t1Y5u9";
const CAROL = "usage_Carol_P3o7I1u5Y9t3R7e1W5q9L3k7J1";
const call = (id: number, method = "eth_chainId") => ({ jsonrpc: "2.0", id, method, params: [] });
const post = (key: string, body: unknown) =>
  fetch(`${gw.base}/gateway/eth/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });

let node: Recorder;
let gw: RunningGateway;
beforeAll(async () => {
  node = await startRecorder();
  // 2 calls a second: 20 in the 10 s window.
  gw = await startGateway([
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } },
    // A node that is never up: its calls get the gateway's 503.
    { path: "dead", chainId: "DEAD1", kind: "evm", upstreams: { rpcHttp: "http://127.0.0.1:9" } },
  ], [{ name: "alice", key: ALICE }, { name: "bob", key: BOB }, { name: "carol", key: CAROL }], { rateLimitPerSecond: 2, maxBodyBytes: 4096 });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await node?.stop();
});

/** The table's entries: name/chain/interface -> counters. */
async function usage(): Promise<Record<string, Record<string, number>>> {
  const text = await runtimeCommand(join(gw.dir, "admin.sock"), "show table st_usage");
  const out: Record<string, Record<string, number>> = {};
  for (const m of text.matchAll(/key=(\S+) use=\d+ exp=\d+ shard=\d+ (.*)/g)) {
    out[m[1]] = Object.fromEntries(m[2].trim().split(" ").map((kv) => [kv.split("=")[0], Number(kv.split("=")[1])]));
  }
  return out;
}

it("counts calls, requests, errors and 429s per key name, chain and interface, exactly as sent", async () => {
  // alice over HTTP: 3 calls, a batch of 4, a body over the limit (413): 5 requests, 7 calls, 1 error.
  for (let i = 0; i < 3; i++) expect((await post(ALICE, call(i))).status).toBe(200);
  expect((await post(ALICE, [call(10), call(11), call(12), call(13)])).status).toBe(200);
  expect((await post(ALICE, JSON.stringify(call(20)).replace("[]", `["${"x".repeat(8000)}"]`))).status).toBe(413);
  // alice over WebSocket: one upgrade, 3 messages of which one a batch of 2: 4 calls.
  const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${ALICE}`, { rejectUnauthorized: false });
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  for (const m of [call(30), [call(31), call(32)], call(33)]) {
    const answered = new Promise((r) => ws.once("message", r));
    ws.send(JSON.stringify(m));
    await answered;
  }
  ws.close();
  await new Promise((r) => ws.once("close", r));
  // bob: 25 calls, 20 within the rate, 5 refused with 429.
  const statuses: number[] = [];
  for (let i = 0; i < 25; i++) statuses.push((await post(BOB, call(i))).status);
  expect(statuses.filter((s) => s === 429)).toHaveLength(5);

  const u = await usage();
  expect(Object.keys(u).filter((k) => k.includes("/eth/") && !k.startsWith("carol/")).sort()).toEqual(["alice/eth/http", "alice/eth/ws", "bob/eth/http"]);
  expect(u["alice/eth/http"]).toMatchObject({ http_req_cnt: 5, gpc0: 7, gpc1: 1, gpc2: 0, gpc3: 0 });
  expect(u["alice/eth/ws"]).toMatchObject({ http_req_cnt: 1, gpc0: 4, gpc1: 0, gpc2: 0 });
  expect(u["bob/eth/http"]).toMatchObject({ http_req_cnt: 25, gpc0: 20, gpc1: 0, gpc2: 5 });
  for (const entry of Object.values(u)) expect(entry.bytes_out_cnt).toBeGreaterThan(0);
  // What reached the node: alice's 4 HTTP requests and bob's 20.
  expect(node.seen).toHaveLength(24);
}, 60_000);

it("a refused call is an error and no call, alone or in a batch: calls count what reached the node", async () => {
  const before = node.seen.length;
  // A batch of 4 with 2 denied: 2 calls go on (one request to the node), 2 errors.
  const mixed = await post(CAROL, [call(1), call(2, "admin_peers"), call(3), call(4, "debug_setHead")]);
  expect(mixed.status).toBe(200);
  expect((await mixed.json()).map((a: { id: number; error?: unknown }) => [a.id, a.error ? "refused" : "answered"])).toEqual([[1, "answered"], [2, "refused"], [3, "answered"], [4, "refused"]]);
  // A batch of 2 denied calls: nothing reaches the node, 2 errors, no call.
  expect((await post(CAROL, [call(5, "admin_peers"), call(6, "admin_nodeInfo")])).status).toBe(200);
  // A denied call alone: 403, an error.
  expect((await post(CAROL, call(7, "admin_peers"))).status).toBe(403);
  const reached = node.seen.slice(before).flatMap((s) => [JSON.parse(s.body)].flat());
  expect(reached.map((c: { id: number }) => c.id)).toEqual([1, 3]);
  expect((await usage())["carol/eth/http"]).toMatchObject({ http_req_cnt: 3, gpc0: reached.length, gpc1: 5 });
}, 30_000);

it("a request refused after its calls were counted spends nothing: no route (405), a node out (503)", async () => {
  const before = (await usage())["carol/eth/http"];
  const seen = node.seen.length;
  // A path under the interface no route serves, and a GET where JSON-RPC is POSTed: 405.
  expect((await fetch(`${gw.base}/gateway/eth/rpc-http/${CAROL}/more`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify([call(1), call(2)]) })).status).toBe(405);
  expect((await fetch(`${gw.base}/gateway/eth/rpc-http/${CAROL}`)).status).toBe(405);
  const after = (await usage())["carol/eth/http"];
  expect({ calls: after.gpc0 - before.gpc0, errors: after.gpc1 - before.gpc1 }).toEqual({ calls: 0, errors: 2 });
  expect(node.seen.length).toBe(seen);
  // A chain whose node is out: 503, whether the gate answered (the node marked down) or HAProxy's
  // connection to it was refused (before it is): no call is counted either way.
  const dead = async (g: RunningGateway) => {
    const r = await fetch(`${g.base}/gateway/dead/rpc-http/${CAROL}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(call(3)) });
    return { status: r.status, gate: /DEAD1 node unavailable/.test(await r.text()) };
  };
  await eventually("the node marked out", () => dead(gw), (d) => d.gate, 10_000);
  expect(await dead(gw)).toEqual({ status: 503, gate: true });
  expect((await usage())["carol/dead/http"]).toMatchObject({ gpc0: 0 });
  // A node that stops while HAProxy still has it in rotation (checked every 10 s): the connection
  // is refused, HAProxy answers 503 itself, and the call is taken back.
  const stopping = createServer((req, res) => (req.resume(), req.on("end", () => res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}'))));
  await new Promise<void>((r) => stopping.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(stopping.address() as AddressInfo).port}`;
  const slow = await startGateway([{ path: "dead", chainId: "DEAD1", kind: "evm", upstreams: { rpcHttp: url } }], [{ name: "carol", key: CAROL }], { checkIntervalMs: 10_000 });
  const counted = async () => /key=carol\/dead\/http .* gpc0=(\d+) gpc1=(\d+)/.exec(await runtimeCommand(join(slow.dir, "admin.sock"), "show table st_usage"))?.slice(1);
  try {
    expect(await dead(slow)).toEqual({ status: 200, gate: false });
    await new Promise<void>((r) => (stopping.closeAllConnections(), stopping.close(() => r())));
    expect(await dead(slow)).toEqual({ status: 503, gate: false });
    expect(await counted()).toEqual(["1", "1"]);
  } finally {
    await slow.stop();
    stopping.close();
  }
}, 30_000);
