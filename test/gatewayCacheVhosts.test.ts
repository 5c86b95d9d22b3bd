/**
 * The response cache in front of real geth (built from its Go module at the stack's pin) left with
 * its default host check (`--http.vhosts localhost`), as an operator's own node may be: the
 * cache's polls and fetches carry the node URL's own host, so on a chain with two nodes the cache
 * starts; and a node that refuses them anyway is said loudly (a log line, rpcstack_cache_live 0).
 */
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import type { GatewayChain } from "../gateway/build.js";
import { clientBinary } from "../devtools/clients.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually, listenLoopback } from "./support/http.js";
import { freePort, jsonRpc, start, stopEach, waitFor, type Child } from "./support/net.js";

const KEY = "vh_Key_8Jk2Lm5Np9Qr3St6Uv1Wx4Yz7Ab0Cd";
let gethBinary: string;
let open: { child: Child; port: number };
let strict: { child: Child; port: number };
let healthy: ReturnType<typeof createServer>;
let gw: RunningGateway;

/** geth --dev on loopback; `vhosts` as its flag, or geth's default when not given. */
async function geth(vhosts?: string) {
  const [port, auth] = [await freePort(), await freePort()];
  const args = ["--dev", "--http", "--http.addr", "127.0.0.1", "--http.port", String(port), "--http.api", "eth,net,web3", "--authrpc.port", String(auth), "--ipcdisable", "--port", "0"];
  const child = start(gethBinary, vhosts ? [...args, "--http.vhosts", vhosts] : args);
  await waitFor("geth --dev", () => jsonRpc(`http://127.0.0.1:${port}`, "eth_chainId").catch(() => undefined));
  return { child, port };
}

// Built from its module when the cache lacks it (.ci/run builds it first).
beforeAll(() => {
  gethBinary = clientBinary("geth");
}, 30 * 60_000);

beforeAll(async () => {
  [open, strict] = [await geth(), await geth("rpc.internal")];
  // Health comes from a stand-in: the strict node's own check would fail on the host too.
  healthy = createServer((_req, res) => res.writeHead(200).end());
  const healthUrl = await listenLoopback(healthy);
  const two = [`http://localhost:${open.port}`, `http://127.0.0.1:${open.port}`];
  const chains: GatewayChain[] = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: two[0] }, nodes: two.map((u, i) => ({ name: `n${i}`, rpcHttp: u, rpcWs: u.replace("http", "ws"), healthUrl })) },
    { path: "strict", chainId: "ETH2", kind: "evm", upstreams: { rpcHttp: `http://localhost:${strict.port}` }, healthUrl },
  ];
  gw = await startGateway(chains, [{ name: "vh", key: KEY }], { cache: { maxBytes: 8 * 1024 * 1024, ...CACHE_DEFAULTS, pollIntervalMs: 200 } });
}, 60_000);

afterAll(async () => {
  await stopEach(gw, open?.child, strict?.child);
  healthy?.close();
});

const genesis = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_getBlockByNumber", params: ["0x0", false] });
const through = async (chain: string) => {
  const r = await fetch(`${gw.base}/gateway/${chain}/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: genesis });
  return { status: r.status, cache: r.headers.get("x-cache"), text: await r.text() };
};
const live = async (chain: string) => Number(new RegExp(`^rpcstack_cache_live\\{chain="${chain}"\\} (\\d)$`, "m").exec(await (await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics/cache`)).text())?.[1]);

describe("the cache against geth's default host check", () => {
  it("on a chain with two nodes the cache starts: a final block is answered from it, byte for byte as the node's", async () => {
    expect(await eventually("the cache live on eth", () => live("eth"), (n) => n === 1)).toBe(1);
    const first = await through("eth");
    expect(first.status).toBe(200);
    const hit = await eventually("a hit", () => through("eth"), (r) => r.cache === "HIT");
    expect(hit.text).toBe(first.text);
    expect(JSON.parse(hit.text).result.number).toBe("0x0");
  });

  it("a node that refuses the cache's polls is said loudly: a warning naming the chain and the node's answer, and rpcstack_cache_live 0", async () => {
    await eventually("the warning", async () => gw.logs(), (l) => l.includes("rpcstack cache: chain strict: cannot read its final block (HTTP 403)"));
    expect(await live("strict")).toBe(0);
    expect(gw.logs()).toContain("rpcstack cache: chain eth: its final block is read, the cache is live");
  });
});
