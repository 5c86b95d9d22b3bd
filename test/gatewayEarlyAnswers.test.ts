/**
 * The gateway on the HAProxy release its production image pins (the one every gateway test runs):
 * what HAProxy answers by itself before any rule runs (early HTTP/1 errors, a connection that never
 * starts TLS), which depends on the release rather than on the generated configuration.
 */
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { GATEWAY_IMAGES } from "../config/networks/images.js";
import { parseImageRef } from "../config/versions.js";
import type { GatewayChain } from "../gateway/build.js";
import { HANDSHAKE_TIMEOUT } from "../gateway/tls.js";
import { haproxyVersion, startGateway, type RunningGateway } from "./support/haproxy.js";
import { rawExchange, wsRoundTrip } from "./support/http.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "ea_Key_R4tY7uI0oP3aS6dF9gH2jK5lZ8xC";

describe(`HAProxy's own answers, on ${haproxyVersion()}`, () => {
  let up: Recorder;
  let gw: RunningGateway;

  beforeAll(async () => {
    up = await startRecorder();
    const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url, rpcWs: up.wsUrl } }];
    gw = await startGateway(chains, [{ name: "ea", key: KEY }]);
  });

  afterAll(async () => {
    await gw?.stop();
    await up?.stop();
  });

  it("the tests run the HAProxy release the production image pins, on the generated configuration: calls are relayed, WebSocket messages read with the policy", async () => {
    expect(haproxyVersion()).toMatch(new RegExp(`^HAProxy version ${(parseImageRef(GATEWAY_IMAGES.haproxy).tag ?? "").replaceAll(".", "\\.")}-`));
    const res = await fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
    expect(res.status).toBe(200);
    const before = up.wsTexts.length;
    const reply = await wsRoundTrip(new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`), { jsonrpc: "2.0", id: 2, method: "admin_peers", params: [] });
    expect(JSON.parse(up.wsTexts[before])).toMatchObject({ id: expect.stringMatching(/^rpcstack-refused-/), method: "rpcstack_method_not_served" });
    // The node's answer to the rewritten call is replaced by the gateway's own, with the call's id and method.
    expect(reply).toEqual({ jsonrpc: "2.0", id: 2, error: { code: -32601, message: "method admin_peers is not served by this gateway" } });
  });

  it("HAProxy's own early answers (a malformed request line, an unknown transfer-encoding, headers not finished in time) are the gateway's JSON errors", async () => {
    const answers = await Promise.all([
      rawExchange(gw.httpsPort, "localhost", ["GET /a b c HTTP/1.1\r\nHost: localhost\r\n\r\n"]),
      rawExchange(gw.httpsPort, "localhost", ["POST /gateway/eth/rpc-http/x HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"]),
      // `timeout http-request` (10 s): the headers never end.
      rawExchange(gw.httpsPort, "localhost", ["GET /gateway/eth HTTP/1.1\r\nHost: loc"], { waitMs: 15_000 }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 422, 408]);
    for (const a of answers) {
      expect(a.head.toLowerCase()).toContain("content-type: application/json");
      expect(JSON.parse(a.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: expect.any(Number) } });
    }
  }, 30_000);

  it("malformed HTTP/1.1 requests that 3.2's parser refuses get a JSON 400 and reach no node; two that announce a body are closed unanswered", async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}';
    const path = `/gateway/eth/rpc-http/${KEY}`;
    const head = (lines: string) => `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${lines}Content-Length: ${body.length}\r\n\r\n${body}`;
    const before = up.seen.length;
    const answered = await Promise.all([
      head(Array.from({ length: 120 }, (_, i) => `X-Header-${i}: a\r\n`).join("")),
      head("Transfer-Encoding : chunked\r\n"),
      head("Transfer-Encoding: chunked, identity\r\n"),
    ].map((r) => rawExchange(gw.httpsPort, "localhost", [r])));
    for (const a of answered) {
      expect(a.status).toBe(400);
      expect(JSON.parse(a.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
    }
    // HAProxy's HTTP/1 layer logs these as 400 but closes without sending it (docs/gateway.md).
    const closed = await Promise.all([
      `POST https://localhost:1${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      head("Connection: Upgrade\r\nUpgrade: websocket\r\n"),
    ].map((r) => rawExchange(gw.httpsPort, "localhost", [r])));
    expect(closed.map((a) => a.status)).toEqual([0, 0]);
    expect(up.seen.length).toBe(before);
  });

  it(`a TCP connection that never starts TLS is closed after the handshake timeout (${HANDSHAKE_TIMEOUT}), not held for timeout client`, async () => {
    const t0 = Date.now();
    const closedAfter = await new Promise<number>((resolve) => {
      const s = connect(gw.httpsPort, "127.0.0.1");
      s.on("error", () => {});
      s.on("close", () => resolve(Date.now() - t0));
      setTimeout(() => (s.destroy(), resolve(-1)), 20_000);
    });
    expect(closedAfter).toBeGreaterThan(Number.parseInt(HANDSHAKE_TIMEOUT) * 1000 - 500);
    expect(closedAfter).toBeLessThan(Number.parseInt(HANDSHAKE_TIMEOUT) * 1000 + 3000);
  }, 30_000);
});
