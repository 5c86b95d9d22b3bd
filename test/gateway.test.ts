/** Debian's real HAProxy serving the generated config over TLS before hardhat and protocol simulators. */
import { request as httpRequest } from "node:http";
import { connect as http2Connect, createServer as createH2cServer, type Http2Server } from "node:http2";
import { Comet38Client } from "@cosmjs/tendermint-rpc";
import { JsonRpcProvider, WebSocketProvider } from "ethers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { GatewayChain } from "../gateway/build.js";
import { startCosmosSim, startSwitch, SIM_HEIGHT, type CosmosSim } from "./support/cosmosSim.js";
import { startGateway, haproxyVersion, type RunningGateway } from "./support/haproxy.js";
import { eventually, hostRequest, wsRoundTrip } from "./support/http.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";
import { stopEach } from "./support/net.js";

const KEY = "gw_test_key_0123456789abcdefghijkLMNOP";
const KEYS = [{ name: "alice", key: KEY }];
const HOSTS = { tendermintRpc: "rpc.cosmoshub.test", rest: "rest.cosmoshub.test", grpc: "grpc.cosmoshub.test" };

let evm: EvmNode;
let strk: StarknetSim;
let cosmos: CosmosSim;
let grpc: Http2Server;
let grpcPort: number;
let ethHealth: Awaited<ReturnType<typeof startSwitch>>;
let gw: RunningGateway;

beforeAll(async () => {
  evm = await startHardhat();
  strk = await startStarknetSim({ from: 5, to: 5 });
  // A simulator, not the real chain (cosmosChain.test.ts runs one): these tests assert the exact path, query and headers that reached the node.
  cosmos = await startCosmosSim();
  ethHealth = await startSwitch(200);
  // An h2c gRPC upstream: answers every call with an empty message and grpc-status 0.
  grpc = createH2cServer();
  grpc.on("stream", (stream, headers) => {
    stream.respond({ ":status": 200, "content-type": "application/grpc", "x-upstream-path": String(headers[":path"]) }, { waitForTrailers: true });
    stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(Buffer.from([0, 0, 0, 0, 0]));
  });
  await new Promise<void>((r) => grpc.listen(0, "127.0.0.1", r));
  grpcPort = (grpc.address() as { port: number }).port;
  const chains: GatewayChain[] = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: evm.url, rpcWs: evm.wsUrl }, healthUrl: ethHealth.url },
    { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: strk.url } },
    {
      path: "cosmoshub", chainId: "COSMOSHUB", kind: "cosmos",
      upstreams: { rpcHttp: cosmos.url, rpcWs: `ws://127.0.0.1:${cosmos.port}/websocket`, rest: cosmos.url, grpc: `http://127.0.0.1:${grpcPort}` },
      hostnames: HOSTS,
    },
  ];
  gw = await startGateway(chains, KEYS, { maxBodyBytes: 4096 }, ["localhost", ...Object.values(HOSTS)]);
}, 120_000);

afterAll(async () => {
  await stopEach(gw, evm, strk, cosmos, ethHealth);
  grpc?.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gw.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

describe(`gateway on ${haproxyVersion()}`, () => {
  it("health checks run and identify themselves to the nodes", async () => {
    await eventually("a health check on the Starknet node", async () => strk.healthChecks(), (n) => n > 0);
  });

  it("the generated configuration passes haproxy -c and names every route", () => {
    expect(gw.build.routes.map((r) => `${r.chain} ${r.iface} ${r.backend}`)).toEqual([
      "eth rpc-http be_eth_rpc",
      "eth rpc be_eth_ws",
      "strk rpc-http be_strk_rpc",
      "cosmoshub rpc-http be_cosmoshub_rpc",
      "cosmoshub rpc-http be_cosmoshub_tmuri",
      "cosmoshub rest be_cosmoshub_rest",
      "cosmoshub rpc be_cosmoshub_ws",
      "cosmoshub hostname be_cosmoshub_host_rpc",
      "cosmoshub hostname be_cosmoshub_host_rest",
      "cosmoshub hostname be_cosmoshub_host_grpc",
    ]);
  });

  it("POST /gateway/eth/rpc-http/<KEY>: ethers reads the real EVM node over TLS", async () => {
    const provider = new JsonRpcProvider(`${gw.base}/gateway/eth/rpc-http/${KEY}`, undefined, { staticNetwork: true });
    try {
      expect((await provider.getNetwork()).chainId).toBe(31337n);
      // hardhat mines a block a second: the head moves past genesis.
      const n = await eventually("a mined block", () => provider.getBlockNumber(), (b) => b > 0);
      const block = await provider.getBlock(n);
      expect(block?.number).toBe(n);
    } finally {
      provider.destroy();
    }
  });

  it("wss /gateway/eth/rpc/<KEY>?secret=null: ethers' eth_subscribe receives new heads", async () => {
    const provider = new WebSocketProvider(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`, 31337, { staticNetwork: true });
    try {
      const heads: number[] = [];
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${heads.length} new heads`)), 10_000);
        provider.on("block", (n: number) => {
          heads.push(n);
          if (heads.length >= 2) (clearTimeout(t), resolve());
        });
      });
      expect(heads[1]).toBeGreaterThan(heads[0]);
    } finally {
      await provider.destroy();
    }
  });

  it("a WebSocket client sends one JSON-RPC message and gets one reply", async () => {
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`);
    const replies: any[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.on("error", reject);
      ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] })));
      ws.on("message", (d) => {
        replies.push(JSON.parse(String(d)));
        setTimeout(resolve, 300);
      });
    });
    ws.close();
    expect(replies).toEqual([{ jsonrpc: "2.0", id: 7, result: "0x7a69" }]);
  });

  it("over WebSocket, a method the policy denies (hardhat_setBalance) gets the gateway's JSON-RPC error naming it and changes nothing", async () => {
    const address = "0x00000000000000000000000000000000000000aa";
    const balance = () => post(`/gateway/eth/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [address, "latest"] }).then(async (r) => (await r.json()).result);
    const before = await balance();
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`);
    const reply = await wsRoundTrip(ws, { jsonrpc: "2.0", id: 5, method: "hardhat_setBalance", params: [address, "0x1000"] });
    expect(reply).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32601, message: "method hardhat_setBalance is not served by this gateway" } });
    expect(await balance()).toBe(before);
  });

  it("the secret query parameter never reaches the upstream WebSocket", async () => {
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/cosmoshub/rpc/${KEY}?secret=s3cr3t`);
    const reply = await wsRoundTrip(ws, { jsonrpc: "2.0", id: 1, method: "status", params: {} });
    expect(reply.result.node_info.network).toBe("cosmoshub-4");
    const upgrade = cosmos.seen.filter((r) => r.method === "UPGRADE").at(-1)!;
    expect(upgrade.url).toBe("/websocket");
    expect(JSON.stringify(upgrade.headers)).not.toContain("s3cr3t");
    expect(JSON.stringify(upgrade.headers)).not.toContain(KEY);
  });

  it("POST /gateway/strk/rpc-http/<KEY>: Starknet JSON-RPC reaches the node at its path, without the key", async () => {
    const res = await post(`/gateway/strk/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method: "starknet_blockNumber", params: [] });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ jsonrpc: "2.0", id: 1, result: 5 });
    expect(strk.calls.at(-1)?.method).toBe("starknet_blockNumber");
  });

  it("cosmos rpc-http: @cosmjs/tendermint-rpc status() over the gateway path", async () => {
    const client = await Comet38Client.connect(`${gw.base}/gateway/cosmoshub/rpc-http/${KEY}`);
    try {
      const st = await client.status();
      expect(st.nodeInfo.network).toBe("cosmoshub-4");
      expect(st.syncInfo.latestBlockHeight).toBe(SIM_HEIGHT);
    } finally {
      client.disconnect();
    }
  });

  it("GET /gateway/<chain>/rpc-http/<KEY>/status (a trailing ? tolerated) is the Tendermint URI status", async () => {
    for (const suffix of ["status", "status?"]) {
      const res = await fetch(`${gw.base}/gateway/cosmoshub/rpc-http/${KEY}/${suffix}`);
      expect(res.status).toBe(200);
      expect((await res.json()).result.sync_info.latest_block_height).toBe(String(SIM_HEIGHT));
      expect(cosmos.seen.at(-1)!.url).toMatch(/^\/status\??$/);
    }
    const res = await fetch(`${gw.base}/gateway/cosmoshub/rpc-http/${KEY}/block?height=42`);
    expect((await res.json()).result.height).toBe("42");
    expect(cosmos.seen.at(-1)!.url).toBe("/block?height=42");
  });

  it("GET /gateway/<chain>/rest/<KEY>/<rest_path>: prefix stripped, query kept", async () => {
    const res = await fetch(`${gw.base}/gateway/cosmoshub/rest/${KEY}/cosmos/base/tendermint/v1beta1/blocks/latest?pagination.limit=1`);
    expect(res.status).toBe(200);
    expect((await res.json()).block.header.height).toBe(String(SIM_HEIGHT));
    const seen = cosmos.seen.at(-1)!;
    expect(seen.url).toBe("/cosmos/base/tendermint/v1beta1/blocks/latest?pagination.limit=1");
    expect(JSON.stringify(seen)).not.toContain(KEY);
    const tx = await post(`/gateway/cosmoshub/rest/${KEY}/cosmos/tx/v1beta1/txs`, { tx_bytes: "AA==", mode: "BROADCAST_MODE_SYNC" });
    expect((await tx.json()).tx_response.code).toBe(0);
  });

  it("what reaches the node: a request in absolute form arrives in origin form, and a JSON-RPC POST's query string is dropped", async () => {
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "status", params: {} });
    const origin = "https://localhost";
    for (const target of [`${origin}/gateway/cosmoshub/rpc-http/${KEY}?debug=1&x=2`, `/gateway/cosmoshub/rpc-http/${KEY}?debug=1`]) {
      const res = await hostRequest(gw.httpsPort, "localhost", target, "POST", call);
      expect(res.status, target).toBe(200);
      expect(cosmos.seen.at(-1)!.url, target).toBe("/");
    }
    const rest = await hostRequest(gw.httpsPort, "localhost", `${origin}/gateway/cosmoshub/rest/${KEY}/cosmos/base/tendermint/v1beta1/blocks/latest?pagination.limit=1`);
    expect(rest.status).toBe(200);
    expect(cosmos.seen.at(-1)!.url).toBe("/cosmos/base/tendermint/v1beta1/blocks/latest?pagination.limit=1");
    const uri = await hostRequest(gw.httpsPort, "localhost", `${origin}/gateway/cosmoshub/rpc-http/${KEY}/block?height=42`);
    expect(JSON.parse(uri.body).result.height).toBe("42");
    expect(cosmos.seen.at(-1)!.url).toBe("/block?height=42");
    // No path at all, only a query: no route, and no gateway error (a 5xx would feed the error-rate alert).
    const bare = await hostRequest(gw.httpsPort, "localhost", `${origin}?x=1`, "POST", call);
    expect(bare.status).toBe(404);
  });

  it("Cosmos public hostnames: Tendermint RPC (and /websocket), REST, and gRPC over HTTP/2 to an h2c upstream", async () => {
    const rpc = await hostRequest(gw.httpsPort, HOSTS.tendermintRpc, "/status");
    expect(rpc.status).toBe(200);
    expect(JSON.parse(rpc.body).result.node_info.network).toBe("cosmoshub-4");
    const rest = await hostRequest(gw.httpsPort, HOSTS.rest, "/cosmos/base/tendermint/v1beta1/node_info");
    expect(JSON.parse(rest.body).default_node_info.network).toBe("cosmoshub-4");

    const ws = new WebSocket(`wss://127.0.0.1:${gw.httpsPort}/websocket`, { servername: HOSTS.tendermintRpc, headers: { Host: HOSTS.tendermintRpc } } as WebSocket.ClientOptions);
    const reply = await wsRoundTrip(ws, { jsonrpc: "2.0", id: 3, method: "abci_info", params: {} });
    expect(reply.result.response.data).toBe("GaiaApp");

    const session = http2Connect(`https://127.0.0.1:${gw.httpsPort}`, { servername: HOSTS.grpc });
    try {
      const { headers, trailers } = await new Promise<{ headers: any; trailers: any }>((resolve, reject) => {
        const stream = session.request({ ":method": "POST", ":path": "/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo", ":authority": HOSTS.grpc, "content-type": "application/grpc", te: "trailers" });
        let headers: any;
        stream.on("response", (h) => (headers = h));
        stream.on("trailers", (t) => resolve({ headers, trailers: t }));
        stream.on("error", reject);
        stream.on("data", () => {});
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
      });
      expect(headers[":status"]).toBe(200);
      expect(headers["content-type"]).toBe("application/grpc");
      expect(headers["x-upstream-path"]).toBe("/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo");
      expect(trailers["grpc-status"]).toBe("0");
    } finally {
      session.close();
    }
  });
});

describe("refusals: JSON errors, and the upstream sees nothing", () => {
  const upstreamRequests = () => cosmos.seen.length + strk.calls.length;

  async function expectJsonError(res: Response, status: number, message: RegExp) {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: expect.any(Number) } });
    expect(body.error.message).toMatch(message);
  }

  it("401 for a wrong key and for a missing key", async () => {
    const before = upstreamRequests();
    await expectJsonError(await post(`/gateway/strk/rpc-http/${"x".repeat(40)}`, { jsonrpc: "2.0", id: 1, method: "starknet_blockNumber" }), 401, /project key/);
    await expectJsonError(await post(`/gateway/strk/rpc-http/`, { jsonrpc: "2.0", id: 1, method: "starknet_blockNumber" }), 401, /project key/);
    await expectJsonError(await post(`/gateway/strk/rpc-http`, { jsonrpc: "2.0", id: 1, method: "starknet_blockNumber" }), 401, /project key/);
    await expectJsonError(await fetch(`${gw.base}/gateway/cosmoshub/rest/wrong/cosmos/base/tendermint/v1beta1/blocks/latest`), 401, /project key/);
    expect(upstreamRequests()).toBe(before);
  });

  it("404 for an unknown chain, an unknown interface, or a path outside /gateway", async () => {
    const before = upstreamRequests();
    await expectJsonError(await post(`/gateway/doge/rpc-http/${KEY}`, {}), 404, /unknown chain or interface/);
    await expectJsonError(await post(`/gateway/strk/grpc/${KEY}`, {}), 404, /unknown chain or interface/);
    await expectJsonError(await fetch(`${gw.base}/`), 404, /unknown chain or interface/);
    expect(upstreamRequests()).toBe(before);
  });

  it("413 for a body over the limit", async () => {
    const before = upstreamRequests();
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "starknet_blockNumber", params: ["x".repeat(8000)] });
    await expectJsonError(await post(`/gateway/strk/rpc-http/${KEY}`, big), 413, /too large/);
    expect(upstreamRequests()).toBe(before);
  });

  it("405 for a method an interface does not serve; 400 for rpc without a WebSocket upgrade", async () => {
    const before = upstreamRequests();
    await expectJsonError(await fetch(`${gw.base}/gateway/strk/rpc-http/${KEY}`), 405, /not served/);
    await expectJsonError(await fetch(`${gw.base}/gateway/cosmoshub/rpc/${KEY}?secret=null`), 400, /WebSocket upgrade/);
    expect(upstreamRequests()).toBe(before);
  });

  it("503 with a body that says so while the node is not synced, and back when it is", async () => {
    ethHealth.set(503);
    const res = await eventually("gateway gating eth", () => post(`/gateway/eth/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }), (r) => r.status === 503);
    await expectJsonError(res, 503, /ETH1 node unavailable or not synced/);
    ethHealth.set(200);
    await eventually("gateway recovering eth", () => post(`/gateway/eth/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }), (r) => r.status === 200);
  });

  it("access logs name the key's owner and never contain the key", async () => {
    await post(`/gateway/strk/rpc-http/${KEY}`, { jsonrpc: "2.0", id: 1, method: "starknet_blockNumber", params: [] });
    await new Promise((r) => setTimeout(r, 200));
    const logs = gw.logs();
    expect(logs).toMatch(/key=alice chain=strk iface=rpc-http POST/);
    expect(logs).not.toContain(KEY);
    expect(logs).not.toContain("s3cr3t");
  });

  it("port 80 redirects to HTTPS without logging the path; metrics are served on their own port", async () => {
    const redirect = await new Promise<{ status: number; location?: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: gw.httpPort, path: `/status?key=${KEY}`, headers: { Host: "localhost" } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, location: res.headers.location });
      });
      req.on("error", reject);
      req.end();
    });
    expect(redirect.status).toBe(301);
    // To the stack's root: neither the path nor the key in its query is echoed back.
    expect(redirect.location).toBe(`https://localhost:${gw.httpsPort}/`);
    const metrics = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/haproxy_frontend_http_requests_total\{proxy="https"\}/);
    await new Promise((r) => setTimeout(r, 200));
    expect(gw.logs()).not.toContain(KEY);
  });
});
