/**
 * Bounds by method name, on Debian's real HAProxy with the generated configuration: every
 * subscription counts against the WebSocket caps whatever its namespace, and filter creations
 * count against one per-key budget over HTTP single calls, batches and WebSockets together.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { GATEWAY_LIMIT_DEFAULTS, compileGateway, type GatewayChain, type GatewayOptions } from "../gateway/build.js";
import { policyData } from "../gateway/policy.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { stopEach } from "./support/net.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "mb_Key_q8Wn3Rt6Yu9Io2Pa5Sd7Fg1Hj4Kl0Zx";
const OTHER = "mb_Key_Other_5Tg8Yh2Uj6Ik9Ol3Pz7Xc1Vb4N";
const FILTERS = 5;
let up: Recorder;
let gw: RunningGateway;

beforeAll(async () => {
  up = await startRecorder();
  const chains: GatewayChain[] = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url, rpcWs: up.wsUrl } },
    { path: "strk", chainId: "SN_MAIN", kind: "starknet", upstreams: { rpcHttp: up.url, rpcWs: up.wsUrl } },
  ];
  gw = await startGateway(chains, [{ name: "mb", key: KEY }, { name: "other", key: OTHER }], { wsMaxSubscriptionsPerSocket: 3, filtersPerKey: FILTERS });
}, 60_000);
afterAll(() => stopEach(gw, up));

const rpc = (method: string, id: number = 1) => ({ jsonrpc: "2.0", id, method, params: [] });
const post = (body: unknown, key = KEY) =>
  fetch(`${gw.base}/gateway/eth/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });

async function open(chain: string): Promise<{ ws: WebSocket; ask(m: unknown): Promise<any> }> {
  const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/${chain}/rpc/${KEY}?secret=null`, { rejectUnauthorized: false });
  ws.on("error", () => {});
  await new Promise((r, j) => (ws.once("open", r), ws.once("unexpected-response", (_q, res) => j(new Error(`upgrade answered ${res.statusCode}`)))));
  const ask = (m: unknown) => new Promise<any>((r) => (ws.once("message", (d) => r(JSON.parse(String(d)))), ws.send(JSON.stringify(m))));
  return { ws, ask };
}
/** The methods of the calls the node got over WebSockets since `from` (a batch as a list). */
const wsMethods = (from: number) => up.wsTexts.slice(from).map((t) => ((x) => (Array.isArray(x) ? x.map((c) => c.method) : x.method))(JSON.parse(t)));

describe("subscriptions, by pattern", () => {
  it("juno_subscribe*, pathfinder_subscribe and starknet_subscribe* all count against the socket's cap; unsubscribing opens none", async () => {
    const s = await open("strk");
    try {
      const from = up.wsTexts.length;
      for (const [i, m] of ["juno_subscribeNewHeads", "starknet_unsubscribe", "pathfinder_subscribe", "starknet_subscribeEvents", "juno_subscribeNewHeads", "pathfinder_subscribe"].entries()) await s.ask(rpc(m, i));
      expect(wsMethods(from)).toEqual([
        "juno_subscribeNewHeads", "starknet_unsubscribe", "pathfinder_subscribe", "starknet_subscribeEvents",
        "rpcstack_subscription_limit_reached", "rpcstack_subscription_limit_reached",
      ]);
    } finally {
      s.ws.close();
    }
  });
});

describe("filters", () => {
  it(`a key creates at most ${FILTERS} filters over HTTP, batches and WebSockets together; past it 429 (HTTP) or a JSON-RPC error in place (WebSocket), and the node never sees them`, async () => {
    const reached = () => up.seen.filter((r) => /_new[a-z]*filter/i.test(r.body)).length;
    for (const m of ["eth_newFilter", "eth_newBlockFilter"]) expect((await post(rpc(m))).status, m).toBe(200);
    // A batch of two reads and a creation: 3 of 5 used.
    expect((await post([rpc("eth_chainId", 1), rpc("eth_newPendingTransactionFilter", 2), rpc("eth_blockNumber", 3)])).status).toBe(200);
    // Two more do not fit in one: the batch is refused whole.
    const batch = await post([rpc("eth_newFilter", 1), rpc("eth_newFilter", 2), rpc("eth_newFilter", 3)]);
    expect(batch.status).toBe(429);
    expect((await batch.json()).error.message).toMatch(/too many filters/);
    expect(reached()).toBe(3);
    // Over a WebSocket the key's budget is the same: two fit, the next is refused in place.
    const s = await open("eth");
    try {
      const from = up.wsTexts.length;
      await s.ask([rpc("eth_newFilter", 1), rpc("eth_chainId", 2)]);
      await s.ask([rpc("eth_newBlockFilter", 3), rpc("eth_newFilter", 4)]);
      expect(wsMethods(from)).toEqual([["eth_newFilter", "eth_chainId"], ["eth_newBlockFilter", "rpcstack_filter_limit_reached"]]);
    } finally {
      s.ws.close();
    }
    // The key has used its 5: a single call, however it spells the method, gets 429.
    for (const body of [rpc("eth_newFilter"), '{"jsonrpc":"2.0","id":1,"method":"eth_new\\u0046ilter","params":[]}', rpc("ETH_NEWBLOCKFILTER")]) {
      const r = await post(body);
      expect(r.status, JSON.stringify(body)).toBe(429);
      expect(r.headers.get("content-type")).toBe("application/json");
    }
    expect(reached()).toBe(3);
    // Calls that create nothing still go through, and another key has its own budget.
    expect((await post(rpc("eth_getFilterChanges"))).status).toBe(200);
    expect((await post(rpc("eth_newFilter"), OTHER)).status).toBe(200);
  });
});

const OPTIONS: GatewayOptions = {
  ...GATEWAY_LIMIT_DEFAULTS, bindAddress: "127.0.0.1", httpsPort: 1, httpPort: 2, metrics: { address: "127.0.0.1", port: 3 }, certFile: "/c.pem", filesDir: "/f",
  luaDir: "/l", rateLimitPerSecond: 10, maxBodyBytes: 65536, checkIntervalMs: 300, caFile: "/ca.pem", threads: 1, maxConnections: 100,
};

describe("one list of reads", () => {
  it("the native retry rules and policy.lua's data name the same reads, for every chain kind", () => {
    for (const kind of ["evm", "starknet", "cosmos"] as const) {
      const nodes = ["a", "b"].map((n) => ({ name: n, rpcHttp: `http://${n}:1`, rpcWs: `ws://${n}:1`, healthUrl: `http://${n}:2/` }));
      const chain: GatewayChain = { path: "c", chainId: "C", kind, upstreams: { rpcHttp: "http://a:1" }, nodes };
      const { config } = compileGateway([chain], OPTIONS);
      const rules = config.split("\n").filter((l) => l.includes("set-var(txn.rpc_read)") && l.includes("{ var(txn.rpc) -m str c }"));
      const native = rules.flatMap((l) => /-i -m str (.*?) \}$/.exec(l)![1].split(" "));
      expect(native.map((m) => m.toLowerCase()).sort(), kind).toEqual(Object.keys(policyData([chain]).c.reads!).sort());
      expect(native.length, kind).toBeGreaterThan(20);
    }
  });
});
