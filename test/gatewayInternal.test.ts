/**
 * The gateway's internal listeners (gateway/internal.ts) are abstract sockets that any process in
 * HAProxy's network namespace can open: the split batch relay, the cache's fetch listener and a
 * multi-node chain's read and send hops. An outsider's request there, with no secret or a guessed
 * one, gets 403 and reaches no node; the gateway's own requests (a split batch, a cache miss, a
 * read and a send through the hops) still go through. On one and two threads.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchAddress } from "../gateway/batch.js";
import { CACHE_DEFAULTS, cacheFetchAddress } from "../gateway/cache.js";
import { hopSocket } from "../gateway/failover.js";
import { INTERNAL_HEADER } from "../gateway/internal.js";
import type { GatewayChain, GatewayOptions } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";
import { stopEach } from "./support/net.js";

const KEY = "internal_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7a";
const TRACE = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "debug_traceTransaction", params: ["0x" + "ab".repeat(32)] });

/** A raw HTTP/1.1 request on an abstract socket: the status line and body of the answer. */
function internalRequest(address: string, path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ path: `\0${address.replace(/^abns@/, "")}` }, () => {
      const head = Object.entries({ Host: "localhost", "Content-Type": "application/json", "Content-Length": String(TRACE.length), Connection: "close", ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      s.end(`POST ${path} HTTP/1.1\r\n${head}\r\n${TRACE}`);
    });
    let out = "";
    s.on("data", (d) => (out += d));
    s.on("end", () => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(out)?.[1] ?? 0), body: out.slice(out.indexOf("\r\n\r\n") + 4) }));
    s.on("error", reject);
  });
}

for (const threads of [1, 2]) {
  describe(`internal listeners, on ${threads} thread${threads > 1 ? "s" : ""}`, () => {
    let a: Recorder;
    let b: Recorder;
    let gw: RunningGateway;
    let o: GatewayOptions;
    const reached = () => a.seen.length + b.seen.length;
    beforeAll(async () => {
      [a, b] = [await startRecorder(), await startRecorder()];
      const nodes = [a, b].map((n, i) => ({ name: `n${i}`, rpcHttp: n.url, rpcWs: n.wsUrl, healthUrl: n.url }));
      const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: a.url, rpcWs: a.wsUrl }, nodes }];
      gw = await startGateway(chains, [{ name: "t", key: KEY }], { threads, cache: { maxBytes: 8 * 1024 * 1024, ...CACHE_DEFAULTS } });
      o = { httpsPort: gw.httpsPort } as GatewayOptions;
    }, 60_000);
    afterAll(() => stopEach(gw, a, b));

    it("refuse an outsider's request, with no secret or a guessed one, before it reaches a node", async () => {
      const listeners = [batchAddress(o), cacheFetchAddress(o), hopSocket("eth", "read", o), hopSocket("eth", "send", o)];
      const before = reached();
      for (const address of listeners) {
        for (const headers of <Record<string, string>[]>[{}, { [INTERNAL_HEADER]: "00000000-0000-4000-8000-000000000000" }, { [INTERNAL_HEADER]: "" }]) {
          const res = await internalRequest(address, "/eth", headers);
          expect(res.status, `${address} ${JSON.stringify(headers)}`).toBe(403);
          expect(JSON.parse(res.body).error.message).toBe("internal listener");
        }
      }
      expect(reached()).toBe(before);
    });

    it("take the gateway's own: a split batch's allowed calls, a cache miss, a read and a send reach a node, without the secret", async () => {
      const post = (body: unknown) => fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      const before = reached();
      const split = await post([{ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }, { jsonrpc: "2.0", id: 2, method: "admin_addPeer", params: ["x"] }]);
      const answers = await split.json();
      expect(answers.map((x: { id: number; result?: unknown; error?: unknown }) => [x.id, "result" in x])).toEqual([[1, true], [2, false]]);
      expect((await post({ jsonrpc: "2.0", id: 3, method: "eth_getBlockByNumber", params: ["0x1", false] })).status).toBe(200);
      expect((await post({ jsonrpc: "2.0", id: 4, method: "eth_sendRawTransaction", params: ["0x00"] })).status).toBe(200);
      // A client's own header of that name goes no further than the public listener.
      const forged = await fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json", [INTERNAL_HEADER]: "guess" }, body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "eth_chainId", params: [] }) });
      expect(forged.status).toBe(200);
      const seen = [...a.seen, ...b.seen].slice(0);
      expect(reached()).toBeGreaterThanOrEqual(before + 3);
      for (const r of seen) expect(r.headers[INTERNAL_HEADER], "the secret never reaches a node").toBeUndefined();
    });
  });
}
