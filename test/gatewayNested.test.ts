/**
 * Batch items that are no call object: a nested batch (`[[{...}]]`), a number, a string. JSON-RPC
 * 2.0 makes each an invalid request; the gateway answers each itself with Invalid Request (-32600,
 * id null) in its place and relays none of them, so a method the policy denies cannot hide one
 * level down. Over HTTP and WebSocket, on one and two threads, before a node that records what
 * reaches it.
 */
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";
import { stopEach } from "./support/net.js";

const KEY = "nested_Key_5hTq8WmZ2xLp4NcV7bRs9KdF3gJ";
const INVALID = { jsonrpc: "2.0", id: null, error: { code: -32600, message: "Invalid Request" } };
const ADD_PEER = { jsonrpc: "2.0", id: 2, method: "admin_addPeer", params: ["enode://x"] };
const CHAIN_ID = { jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] };
/** Bodies and the answer due to each: the JSON-RPC 2.0 examples' shapes, and the nested batch. */
const CASES: [string, unknown, unknown[]][] = [
  ["a nested batch holding a denied method", [[ADD_PEER]], [INVALID]],
  ["a call beside a nested batch, a number and a string", [CHAIN_ID, [ADD_PEER], 5, "admin_addPeer"], [{ jsonrpc: "2.0", id: 1, result: "0x1" }, INVALID, INVALID, INVALID]],
  ["[1,2,3]", [1, 2, 3], [INVALID, INVALID, INVALID]],
];

for (const threads of [1, 2]) {
  describe(`batch items that are no call, on ${threads} thread${threads > 1 ? "s" : ""}`, () => {
    let node: Recorder;
    let gw: RunningGateway;
    beforeAll(async () => {
      node = await startRecorder();
      const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } }];
      gw = await startGateway(chains, [{ name: "n", key: KEY }], { threads });
    }, 60_000);
    afterAll(() => stopEach(gw, node));

    const reachedNode = () => [...node.seen.map((s) => s.body), ...node.wsTexts].join("\n");

    it.each(CASES)("over HTTP, %s: each answered Invalid Request in its place, none relayed", async (_label, body, answer) => {
      const res = await fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(answer);
      expect(reachedNode()).not.toMatch(/admin_addPeer|^\[?\d|"admin/m);
    });

    it.each(CASES)("over WebSocket, %s: each answered Invalid Request in its place, none relayed", async (_label, body, answer) => {
      const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`, { rejectUnauthorized: false });
      try {
        await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
        const reply = new Promise<string>((r) => ws.once("message", (d) => r(String(d))));
        ws.send(JSON.stringify(body));
        expect(JSON.parse(await reply)).toEqual(answer);
        expect(reachedNode()).not.toContain("admin_addPeer");
      } finally {
        ws.terminate();
      }
    });
  });
}
