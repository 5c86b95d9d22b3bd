/**
 * A real Cosmos SDK chain (wasmd: test/support/cosmosNode.ts) behind the real HAProxy with the
 * generated configuration, called by the clients Cosmos developers use: @cosmjs/tendermint-rpc and
 * @cosmjs/stargate on the keyed paths, gRPC (@grpc/grpc-js) on the chain's gRPC hostname, and plain
 * HTTPS for the URI form, REST and the public hostnames. The gateway's Cosmos rules (policy,
 * subscription bounds, the per-address rate on hostnames, the body bound) are checked against what
 * this node answers.
 */
import * as grpc from "@grpc/grpc-js";
import { DirectSecp256k1HdWallet } from "@cosmjs/proto-signing";
import { SigningStargateClient, StargateClient, GasPrice } from "@cosmjs/stargate";
import { Comet38Client, WebsocketClient } from "@cosmjs/tendermint-rpc";
import { QueryBalanceRequest, QueryBalanceResponse } from "cosmjs-types/cosmos/bank/v1beta1/query";
import { GetNodeInfoRequest, GetNodeInfoResponse } from "cosmjs-types/cosmos/base/tendermint/v1beta1/query";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { GatewayChain } from "../gateway/build.js";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { extraChain } from "../plan/surface.js";
import { COSMOS_DENOM, COSMOS_PREFIX, follow, startCosmosChain, type CosmosNode } from "./support/cosmosNode.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually, hostRequest } from "./support/http.js";
import { stopEach } from "./support/net.js";

const KEY = "cosmos_key_0123456789abcdefghijkLMNOPQ";
const HOSTS = { tendermintRpc: "rpc.wasm.test", rest: "rest.wasm.test", grpc: "grpc.wasm.test" };
/** Subscriptions one socket may open (gateway.wsMaxSubscriptionsPerSocket), low enough to pass here. */
const SUBS_PER_SOCKET = 3;

let wallet: DirectSecp256k1HdWallet;
let sender: string;
let node: CosmosNode;
let gw: RunningGateway;

const rpcHttp = () => `${gw.base}/gateway/wasm/rpc-http/${KEY}`;
const rest = (path: string) => `${gw.base}/gateway/wasm/rest/${KEY}${path}`;
const wss = () => `wss://localhost:${gw.httpsPort}/gateway/wasm/rpc/${KEY}`;
const jsonRpc = (method: string, params: unknown = {}, id: number | string = 1) => ({ jsonrpc: "2.0", id, method, params });
const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

/** A gRPC client of the chain's gRPC hostname on `g`, over TLS with the test CA. */
const grpcClient = (g: RunningGateway) =>
  new grpc.Client(`127.0.0.1:${g.httpsPort}`, grpc.credentials.createSsl(readFileSync(join(process.env.RPCSTACK_TEST_CA_DIR!, "ca.pem"))), {
    "grpc.ssl_target_name_override": HOSTS.grpc,
    "grpc.default_authority": HOSTS.grpc,
  });
/** A unary call with cosmjs-types' encoders. */
const grpcUnary = (client: grpc.Client) => <Req, Res>(path: string, req: Req, enc: { encode(r: Req): { finish(): Uint8Array } }, dec: { decode(b: Uint8Array): Res }) =>
  new Promise<Res>((resolve, reject) =>
    client.makeUnaryRequest(path, (r: Req) => Buffer.from(enc.encode(r).finish()), (b: Buffer) => dec.decode(b), req, (err, res) => (err ? reject(err) : resolve(res!))),
  );

beforeAll(async () => {
  wallet = await DirectSecp256k1HdWallet.generate(24, { prefix: COSMOS_PREFIX });
  [{ address: sender }] = await wallet.getAccounts();
  node = await startCosmosChain([sender]);
  const chains: GatewayChain[] = [{
    path: "wasm", chainId: "WASM", kind: "cosmos",
    upstreams: { rpcHttp: node.rpcUrl, rpcWs: node.wsUrl, rest: node.restUrl, grpc: node.grpcUrl },
    hostnames: HOSTS,
  }];
  gw = await startGateway(chains, [{ name: "dev", key: KEY }], { wsMaxSubscriptionsPerSocket: SUBS_PER_SOCKET, maxBodyBytes: 64 * 1024, cache: { maxBytes: 32 * 1024 * 1024, ...CACHE_DEFAULTS } }, ["localhost", ...Object.values(HOSTS)]);
}, 180_000);

afterAll(async () => {
  await stopEach(gw);
  await node?.remove();
});

describe("a real Cosmos SDK chain (wasmd, CometBFT) through the gateway", () => {
  it("@cosmjs/tendermint-rpc on the keyed path: status, block and abci_query answered by the node", async () => {
    const client = await Comet38Client.connect(rpcHttp());
    try {
      const status = await client.status();
      expect(status.nodeInfo.network).toBe(node.chainId);
      expect(status.syncInfo.latestBlockHeight).toBeGreaterThan(1);
      const block = await client.block(2);
      expect(block.block.header.height).toBe(2);
      expect(block.block.header.chainId).toBe(node.chainId);
      const query = await client.abciQuery({ path: "/cosmos.bank.v1beta1.Query/Balance", data: QueryBalanceRequest.encode({ address: sender, denom: COSMOS_DENOM }).finish() });
      expect(query.code).toBe(0);
      expect(QueryBalanceResponse.decode(query.value).balance?.amount).toBe("1000000000000");
    } finally {
      client.disconnect();
    }
  });

  it("the Tendermint URI form: /status? and /block?height=N on the keyed path and on the RPC hostname", async () => {
    for (const suffix of ["status", "status?"]) {
      const res = await fetch(`${rpcHttp()}/${suffix}`);
      expect(res.status, suffix).toBe(200);
      expect((await res.json()).result.node_info.network).toBe(node.chainId);
    }
    const block = await (await fetch(`${rpcHttp()}/block?height=2`)).json();
    expect(block.result.block.header.height).toBe("2");
    const onHost = await hostRequest(gw.httpsPort, HOSTS.tendermintRpc, "/block?height=2");
    expect(onHost.status).toBe(200);
    expect(JSON.parse(onHost.body).result.block_id.hash).toBe(block.result.block_id.hash);
  });

  it("a subscription to new blocks over the keyed WebSocket (cosmjs opens <url>/websocket) and over the RPC hostname's /websocket", async () => {
    const client = await Comet38Client.create(new WebsocketClient(wss(), (e) => console.log(`cosmjs websocket: ${e}`)));
    try {
      const heights = await new Promise<number[]>((resolve, reject) => {
        const seen: number[] = [];
        const sub = client.subscribeNewBlockHeader().subscribe({
          next: (h) => {
            seen.push(h.height);
            if (seen.length === 3) (sub.unsubscribe(), resolve(seen));
          },
          error: reject,
        });
        setTimeout(() => reject(new Error(`only ${seen.length} blocks in 20 s`)), 20_000);
      });
      expect(heights[1]).toBe(heights[0] + 1);
      expect(heights[2]).toBe(heights[1] + 1);
    } finally {
      client.disconnect();
    }
    const ws = new WebSocket(`wss://127.0.0.1:${gw.httpsPort}/websocket`, { servername: HOSTS.tendermintRpc, headers: { Host: HOSTS.tendermintRpc } } as WebSocket.ClientOptions);
    try {
      const event = await new Promise<any>((resolve, reject) => {
        ws.on("error", reject);
        ws.on("open", () => ws.send(JSON.stringify(jsonRpc("subscribe", { query: "tm.event='NewBlock'" }))));
        ws.on("message", (d) => {
          const m = JSON.parse(String(d));
          if (m.result?.data) resolve(m.result.data);
        });
      });
      expect(event.type).toBe("tendermint/event/NewBlock");
      expect(event.value.block.header.chain_id).toBe(node.chainId);
    } finally {
      ws.close();
    }
  });

  it("@cosmjs/stargate: a bank send signed here, broadcast through the gateway, found in a block; balances over REST", async () => {
    const recipient = (await (await DirectSecp256k1HdWallet.generate(12, { prefix: COSMOS_PREFIX })).getAccounts())[0].address;
    const client = await SigningStargateClient.connectWithSigner(rpcHttp(), wallet, { gasPrice: GasPrice.fromString(`0${COSMOS_DENOM}`) });
    try {
      const sent = await client.sendTokens(sender, recipient, [{ denom: COSMOS_DENOM, amount: "12345" }], "auto", "through rpcstack");
      expect(sent.code).toBe(0);
      const tx = await client.getTx(sent.transactionHash);
      expect(tx?.height).toBe(sent.height);
      const block = await client.getBlock(sent.height);
      expect(block.txs.length).toBeGreaterThan(0);
    } finally {
      client.disconnect();
    }
    const res = await fetch(rest(`/cosmos/bank/v1beta1/balances/${recipient}`));
    expect(res.status).toBe(200);
    expect((await res.json()).balances).toEqual([{ denom: COSMOS_DENOM, amount: "12345" }]);
    // The read-only client agrees, over Tendermint RPC.
    const reader = await StargateClient.connect(rpcHttp());
    try {
      expect(await reader.getBalance(recipient, COSMOS_DENOM)).toEqual({ denom: COSMOS_DENOM, amount: "12345" });
    } finally {
      reader.disconnect();
    }
  });

  it("REST on the keyed path and on the REST hostname: the node's own answers", async () => {
    const latest = await (await fetch(rest("/cosmos/base/tendermint/v1beta1/blocks/latest"))).json();
    expect(latest.block.header.chain_id).toBe(node.chainId);
    const info = await hostRequest(gw.httpsPort, HOSTS.rest, "/cosmos/base/tendermint/v1beta1/node_info");
    expect(info.status).toBe(200);
    expect(JSON.parse(info.body).default_node_info.network).toBe(node.chainId);
    // The node's own 4xx passes through: an address that is no bech32 address.
    const bad = await fetch(rest("/cosmos/bank/v1beta1/balances/not-an-address"));
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });

  it("gRPC on the chain's gRPC hostname (grpc-js over TLS): a bank balance and the node's info", async () => {
    const client = grpcClient(gw);
    const unary = grpcUnary(client);
    try {
      const balance = await unary("/cosmos.bank.v1beta1.Query/Balance", { address: sender, denom: COSMOS_DENOM }, QueryBalanceRequest, QueryBalanceResponse);
      expect(BigInt(balance.balance!.amount)).toBeGreaterThan(0n);
      const info = await unary("/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo", {}, GetNodeInfoRequest, GetNodeInfoResponse);
      expect(info.defaultNodeInfo?.network).toBe(node.chainId);
      // A method the node does not have: its own gRPC status, relayed.
      const missing = await unary("/cosmos.bank.v1beta1.Query/NoSuchMethod", {}, GetNodeInfoRequest, GetNodeInfoResponse).catch((e) => e);
      expect(missing.code).toBe(grpc.status.UNIMPLEMENTED);
    } finally {
      client.close();
    }
  });

  it("denied routes: 403 from the gateway for unsafe_ and dial_ calls (JSON-RPC, batch, URI); what the node answers for a method it lacks", async () => {
    const denied = await post(rpcHttp(), jsonRpc("unsafe_flush_mempool"));
    expect(denied.status).toBe(403);
    expect((await denied.json()).error.message).toMatch(/unsafe_flush_mempool/);
    // In a batch the refused call is its own error element; the others are the node's answers.
    const batch = (await (await post(rpcHttp(), [jsonRpc("status", {}, 1), jsonRpc("unsafe_flush_mempool", {}, 2)])).json()) as any[];
    expect(batch.find((a) => a.id === 1).result.node_info.network).toBe(node.chainId);
    expect(batch.find((a) => a.id === 2).error.message).toMatch(/unsafe_flush_mempool/);
    const uri = await fetch(`${rpcHttp()}/dial_peers?persistent=true&peers=["x@127.0.0.1:1"]`);
    expect(uri.status).toBe(403);
    const onHost = await hostRequest(gw.httpsPort, HOSTS.tendermintRpc, "/", "POST", JSON.stringify(jsonRpc("dial_seeds", { seeds: [] })));
    expect(onHost.status).toBe(403);
    // What the node itself answers for a method it has no route for (the policy's other fate).
    const unknown = await (await post(rpcHttp(), jsonRpc("no_such_method"))).json();
    expect(unknown.error).toMatchObject({ code: -32601, message: "Method not found" });
  });

  it("subscriptions are bounded per socket: past the cap the node answers the rewritten call with its own error", async () => {
    const ws = new WebSocket(`${wss()}?secret=null`);
    const answers = new Map<number, any>();
    try {
      await new Promise<void>((resolve, reject) => {
        ws.on("error", reject);
        ws.on("message", (d) => {
          const m = JSON.parse(String(d));
          if (typeof m.id === "number" && !answers.has(m.id)) answers.set(m.id, m);
          if (answers.size === SUBS_PER_SOCKET + 1) resolve();
        });
        ws.on("open", () => {
          for (let i = 1; i <= SUBS_PER_SOCKET + 1; i++) ws.send(JSON.stringify(jsonRpc("subscribe", { query: `tm.event='NewBlock' AND block.height > ${i}` }, i)));
        });
        setTimeout(() => reject(new Error(`answers: ${JSON.stringify([...answers.values()])}`)), 15_000);
      });
    } finally {
      ws.close();
    }
    for (let i = 1; i <= SUBS_PER_SOCKET; i++) expect(answers.get(i).result, `subscription ${i}`).toEqual({});
    expect(answers.get(SUBS_PER_SOCKET + 1).error).toMatchObject({ code: -32601, message: "Method not found" });
  });

  it("with the response cache on, a Cosmos chain's answers all come from the node: the head moves between identical calls", async () => {
    const heights: number[] = [];
    const t0 = Date.now();
    while (Date.now() - t0 < 3_000) {
      const [rpc, uri, restLatest] = await Promise.all([
        post(rpcHttp(), jsonRpc("status")).then((r) => r.json()).then((b) => Number(b.result.sync_info.latest_block_height)),
        fetch(`${rpcHttp()}/status`).then((r) => r.json()).then((b) => Number(b.result.sync_info.latest_block_height)),
        fetch(rest("/cosmos/base/tendermint/v1beta1/blocks/latest")).then((r) => r.json()).then((b) => Number(b.block.header.height)),
      ]);
      heights.push(rpc, uri, restLatest);
      await new Promise((r) => setTimeout(r, 250));
    }
    // Blocks come every half second: ten rounds over 3 s see several heights on each interface.
    const per = (i: number) => new Set(heights.filter((_, j) => j % 3 === i)).size;
    expect([per(0), per(1), per(2)].every((n) => n >= 3), `heights ${heights}`).toBe(true);
  });

  it("a body over the bound is refused with 413 before the node; a transaction of normal size reaches it", async () => {
    const big = await post(rpcHttp(), jsonRpc("broadcast_tx_sync", { tx: Buffer.alloc(80 * 1024).toString("base64") }));
    expect(big.status).toBe(413);
    // The node's own verdict on a malformed transaction: it was relayed, and answered by CometBFT/the app.
    const small = await (await post(rpcHttp(), jsonRpc("broadcast_tx_sync", { tx: Buffer.from("not a tx").toString("base64") }))).json();
    expect(small.result?.code ?? small.error?.code).toBeDefined();
    expect(small.result?.code).not.toBe(0);
  });
});

describe("two real nodes of one Cosmos chain (gateway.chains[].replicas): the gateway fails over between them", () => {
  let a: CosmosNode;
  let b: CosmosNode;
  let gw2: RunningGateway;
  let grpc2: grpc.Client;
  const base = () => `${gw2.base}/gateway/wasm/`;

  beforeAll(async () => {
    a = node;
    b = await follow(a);
    // Through the plan's own reading of the config: the chain's upstreams are node1, the replica node2.
    const chain = extraChain({
      path: "wasm", chainId: "WASM", kind: "cosmos",
      upstreams: { rpcHttp: a.rpcUrl, rpcWs: a.wsUrl, rest: a.restUrl, grpc: a.grpcUrl },
      replicas: [{ rpcHttp: b.rpcUrl, rpcWs: b.wsUrl, rest: b.restUrl, grpc: b.grpcUrl }],
      hostnames: HOSTS,
    });
    gw2 = await startGateway([chain], [{ name: "dev", key: KEY }], {}, ["localhost", ...Object.values(HOSTS)]);
    grpc2 = grpcClient(gw2);
  }, 180_000);

  afterAll(async () => {
    grpc2?.close();
    await stopEach(gw2);
    await b?.remove();
  });

  /** One call per interface; each resolves with the answering node's moniker, or the failure. */
  const calls: Record<string, () => Promise<string>> = {
    "JSON-RPC status": async () => (await (await post(`${base()}rpc-http/${KEY}`, jsonRpc("status"))).json()).result.node_info.moniker,
    "URI /status": async () => (await (await fetch(`${base()}rpc-http/${KEY}/status`)).json()).result.node_info.moniker,
    "REST node_info": async () => (await (await fetch(`${base()}rest/${KEY}/cosmos/base/tendermint/v1beta1/node_info`)).json()).default_node_info.moniker,
    "RPC hostname": async () => JSON.parse((await hostRequest(gw2.httpsPort, HOSTS.tendermintRpc, "/status")).body).result.node_info.moniker,
    "REST hostname": async () => JSON.parse((await hostRequest(gw2.httpsPort, HOSTS.rest, "/cosmos/base/tendermint/v1beta1/node_info")).body).default_node_info.moniker,
    "gRPC hostname": async () => (await grpcUnary(grpc2)("/cosmos.base.tendermint.v1beta1.Service/GetNodeInfo", {}, GetNodeInfoRequest, GetNodeInfoResponse)).defaultNodeInfo!.moniker,
  };
  const sweep = async () => {
    const out: Record<string, string> = {};
    for (const [name, call] of Object.entries(calls)) out[name] = await call().catch((e) => `failed: ${e}`);
    return out;
  };

  it("both nodes serve every interface; with node1 stopped node2 answers them all, not one call fails; node1 comes back into rotation", async () => {
    const monikers = new Set<string>();
    for (let i = 0; i < 6; i++) for (const m of Object.values(await sweep())) monikers.add(m);
    expect([...monikers].sort()).toEqual([a.moniker, b.moniker].sort());

    await a.stop();
    try {
      // A steady client over every interface from the moment node1 is gone: each call answered, by node2.
      const failed: string[] = [];
      const t0 = Date.now();
      let rounds = 0;
      while (Date.now() - t0 < 6_000) {
        for (const [name, m] of Object.entries(await sweep())) if (m !== b.moniker) failed.push(`${name}: ${m}`);
        rounds++;
      }
      expect(failed, `${rounds} rounds`).toEqual([]);
      console.log(`cosmos failover: ${rounds * Object.keys(calls).length} calls after node1 stopped, all answered by node2`);
    } finally {
      await a.start();
    }
    await eventually("node1 back in rotation", async () => new Set(await Promise.all(Array.from({ length: 6 }, () => calls["REST node_info"]()))).has(a.moniker), (v) => v, 20_000);
  }, 120_000);
});
