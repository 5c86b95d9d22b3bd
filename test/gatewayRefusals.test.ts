/**
 * Refused calls answered as JSON-RPC 2.0 clients expect, on the real HAProxy before a real EVM
 * node (hardhat): the request's own id and method, batches answered as one array with refused
 * calls in place and the others relayed, and ethers' default batching.
 */
import { JsonRpcProvider } from "ethers";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { freePort, stopEach } from "./support/net.js";

const KEY = "ref_Key_5hTq8WmZ2xLp4NcV7bRs9KdF3gJy";
const ADDRESS = "0x00000000000000000000000000000000000000bb";

let evm: EvmNode;
let gw: RunningGateway;

beforeAll(async () => {
  evm = await startHardhat();
  const chains: GatewayChain[] = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: evm.url, rpcWs: evm.wsUrl } },
    // A node that is not there: nothing listens on its port.
    { path: "gone", chainId: "GONE", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${await freePort()}` } },
  ];
  gw = await startGateway(chains, [{ name: "alice", key: KEY }]);
}, 120_000);

afterAll(async () => {
  await stopEach(gw, evm);
});

const post = (body: unknown, chain = "eth") =>
  fetch(`${gw.base}/gateway/${chain}/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
const balance = async () => (await (await post({ jsonrpc: "2.0", id: 1, method: "eth_getBalance", params: [ADDRESS, "latest"] })).json()).result;
const setBalance = (id: unknown) => ({ jsonrpc: "2.0", id, method: "hardhat_setBalance", params: [ADDRESS, "0x1000"] });
const notServed = (id: unknown, method: string) => ({ jsonrpc: "2.0", id, error: { code: -32601, message: `method ${method} is not served by this gateway` } });

describe("a refused call", () => {
  it("is answered 403 with its own id, exactly as sent, and its method as sent", async () => {
    for (const id of ["7", '"req-7"', "null", "1.50", '"\\u00e9"']) {
      const res = await post(`{"jsonrpc":"2.0","id":${id},"method":"Hardhat_SetBalance","params":[]}`);
      expect(res.status).toBe(403);
      expect(res.headers.get("content-type")).toBe("application/json");
      const text = await res.text();
      expect(text).toContain(`"id":${id},`);
      expect(JSON.parse(text)).toMatchObject({ jsonrpc: "2.0", error: { code: -32601, message: "method Hardhat_SetBalance is not served by this gateway" } });
    }
    // A body the gateway cannot read keeps its error with id null.
    const bad = await post('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
    expect(bad.status).toBe(400);
    expect((await bad.json()).id).toBeNull();
  });

  it("as a notification (no id) gets the 403 with no body: JSON-RPC 2.0 answers a notification with nothing; an id of null is an id", async () => {
    for (const body of ['{"jsonrpc":"2.0","method":"hardhat_setBalance","params":[]}', String.raw`{"jsonrpc":"2.0","method":"hardhat_setBalance","params":[]}`]) {
      const res = await post(body);
      expect(res.status, body).toBe(403);
      expect(await res.text(), body).toBe("");
    }
    const nullId = await post('{"jsonrpc":"2.0","id":null,"method":"hardhat_setBalance","params":[]}');
    expect(await nullId.json()).toEqual(notServed(null, "hardhat_setBalance"));
  });

  it("names a method sent with escapes or odd characters JSON-escaped, and cut when long", async () => {
    const odd = await post(String.raw`{"jsonrpc":"2.0","id":2,"method":"debug_\u0022x\\y\u0001","params":[]}`);
    expect(await odd.json()).toEqual(notServed(2, 'debug_"x\\y\u0001'));
    const long = await (await post({ jsonrpc: "2.0", id: 3, method: `debug_${"a".repeat(5000)}` })).json();
    expect(long.error.message).toBe(`method debug_${"a".repeat(94)}... is not served by this gateway`);
  });

});

describe("a batch holding refused calls", () => {
  it("is answered as one array: refused calls in place, allowed ones relayed, notifications unanswered", async () => {
    const before = await balance();
    const res = await post([
      { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] },
      setBalance("b"),
      { jsonrpc: "2.0", method: "hardhat_mine", params: [] },
      { jsonrpc: "2.0", id: 3, method: "eth_getBalance", params: [ADDRESS, "latest"] },
    ]);
    expect(res.status).toBe(200);
    // The service's answer is the gateway's like any other: a page may read it.
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(await res.json()).toEqual([
      { jsonrpc: "2.0", id: 1, result: "0x7a69" },
      notServed("b", "hardhat_setBalance"),
      { jsonrpc: "2.0", id: 3, result: before },
    ]);
    expect(await balance()).toBe(before);
  });

  it("with every call refused, is answered without the node", async () => {
    const res = await post([setBalance(1), setBalance(2)], "gone");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([notServed(1, "hardhat_setBalance"), notServed(2, "hardhat_setBalance")]);
  });

  it("whose node fails gets the node's error status, and its refused calls are still answered", async () => {
    const res = await post([setBalance(1), { jsonrpc: "2.0", id: 2, method: "eth_chainId" }], "gone");
    expect(res.status).toBe(503);
    const body = await res.json();
    expect(body[0]).toEqual(notServed(1, "hardhat_setBalance"));
    expect(body[1]).toMatchObject({ jsonrpc: "2.0", id: 2, error: { code: -32053 } });
  });

  it("ethers' default batching: the allowed call resolves, the refused one rejects with the gateway's error; alone too", async () => {
    const provider = new JsonRpcProvider(`${gw.base}/gateway/eth/rpc-http/${KEY}`, 31337, { staticNetwork: true, batchMaxCount: 10, batchStallTime: 20 });
    try {
      const [chain, refused] = await Promise.allSettled([provider.send("eth_chainId", []), provider.send("hardhat_setBalance", [ADDRESS, "0x1000"])]);
      expect(chain).toEqual({ status: "fulfilled", value: "0x7a69" });
      expect(refused.status).toBe("rejected");
      expect(String((refused as PromiseRejectedResult).reason)).toMatch(/method hardhat_setBalance is not served by this gateway/);
    } finally {
      provider.destroy();
    }
    // Sent alone (no batching), the 403's JSON-RPC error reaches the caller too.
    const single = new JsonRpcProvider(`${gw.base}/gateway/eth/rpc-http/${KEY}`, 31337, { staticNetwork: true, batchMaxCount: 1 });
    try {
      await expect(single.send("hardhat_setBalance", [ADDRESS, "0x1000"])).rejects.toThrow(/method hardhat_setBalance is not served by this gateway/);
    } finally {
      single.destroy();
    }
  });
});

describe("over WebSocket", () => {
  const socket = async (): Promise<{ send(text: string): void; ask(text: string): Promise<string>; close(): void }> => {
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`);
    await new Promise((resolve, reject) => (ws.on("open", resolve), ws.on("error", reject)));
    const replies: string[] = [];
    const waiting: ((s: string) => void)[] = [];
    ws.on("message", (d) => (waiting.length ? waiting.shift()!(String(d)) : replies.push(String(d))));
    return {
      send: (text) => ws.send(text),
      ask: (text) => (ws.send(text), new Promise((r) => (replies.length ? r(replies.shift()!) : waiting.push(r)))),
      close: () => ws.close(),
    };
  };

  it("a refused call is answered with its own id and method; a batch's refused calls in place", async () => {
    const before = await balance();
    const s = await socket();
    try {
      expect(JSON.parse(await s.ask(JSON.stringify(setBalance("w-1"))))).toEqual(notServed("w-1", "hardhat_setBalance"));
      const batch = [{ jsonrpc: "2.0", id: 1, method: "eth_chainId" }, setBalance(2), { jsonrpc: "2.0", method: "debug_x" }, { jsonrpc: "2.0", id: 3, method: "net_version" }];
      expect(JSON.parse(await s.ask(JSON.stringify(batch)))).toEqual([
        { jsonrpc: "2.0", id: 1, result: "0x7a69" },
        notServed(2, "hardhat_setBalance"),
        { jsonrpc: "2.0", id: 3, result: "31337" },
      ]);
      // A refused notification gets no answer, the node's included: the next answer is the next call's.
      s.send('{"jsonrpc":"2.0","method":"hardhat_mine"}');
      s.send('[{"jsonrpc":"2.0","method":"hardhat_mine"},{"jsonrpc":"2.0","method":"debug_x"}]');
      expect(JSON.parse(await s.ask('{"jsonrpc":"2.0","id":9,"method":"eth_chainId"}'))).toEqual({ jsonrpc: "2.0", id: 9, result: "0x7a69" });
      // A client's own id shaped like the gateway's markers is its own.
      expect(JSON.parse(await s.ask('{"jsonrpc":"2.0","id":"rpcstack-refused-1","method":"eth_chainId"}'))).toEqual({ jsonrpc: "2.0", id: "rpcstack-refused-1", result: "0x7a69" });
    } finally {
      s.close();
    }
    expect(await balance()).toBe(before);
  });
});
