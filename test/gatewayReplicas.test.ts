/**
 * gateway.chains[].replicas on the real HAProxy: an operator's own nodes may check the Host header
 * (geth's --http.vhosts, a name-based HTTPS front end), so every call reaches each node with that
 * node's own host and port, reads and sends alike, as a chain of one node does. (Failover between
 * replicas on real nodes: cosmosChain.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { extraChain } from "../plan/surface.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually } from "./support/http.js";
import { stopEach } from "./support/net.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "replicas_key_0123456789abcdefghijkLMNOP";
let a: Recorder;
let b: Recorder;
let gw: RunningGateway;

beforeAll(async () => {
  [a, b] = [await startRecorder(), await startRecorder()];
  const chain = extraChain({ path: "op", chainId: "OP", kind: "evm", upstreams: { rpcHttp: `${a.url}/rpc` }, replicas: [{ rpcHttp: `${b.url}/rpc` }] });
  gw = await startGateway([chain], [{ name: "t", key: KEY }], { cache: undefined });
}, 60_000);

afterAll(async () => {
  await stopEach(gw, a, b);
});

const call = (method: string) =>
  fetch(`${gw.base}/gateway/op/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }) }).then((r) => r.status);

it("each node gets its own Host and the path the config names, for reads and sends alike; both nodes serve", async () => {
  await eventually("both nodes serve reads", async () => {
    for (let i = 0; i < 4; i++) expect(await call("eth_chainId")).toBe(200);
    return a.seen.length > 0 && b.seen.length > 0;
  }, (v) => v, 15_000);
  for (let i = 0; i < 4; i++) expect(await call("eth_sendRawTransaction")).toBe(200);
  for (const [node, name] of [[a, "a"], [b, "b"]] as const) {
    const authority = new URL(node.url).host;
    expect(node.seen.length, name).toBeGreaterThan(0);
    expect([...new Set(node.seen.map((s) => s.headers.host))], name).toEqual([authority]);
    expect([...new Set(node.seen.map((s) => s.url))], name).toEqual(["/rpc"]);
  }
  expect([...a.seen, ...b.seen].filter((s) => s.body.includes("eth_sendRawTransaction")).length).toBe(4);
});
