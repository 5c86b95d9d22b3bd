/**
 * The gateway on HAProxy 3.2, the release line of its production image (the other gateway tests
 * run on Debian bookworm's 2.6): Debian unstable's package in a container on the host's network.
 * What differs between the two is tested here: HAProxy's own early errors answered with the
 * gateway's JSON error files, and the TLS handshake bounded apart from `timeout client`.
 *
 * Without a Docker daemon the file holds one test whose name says NOT RUN: it fails where CI is
 * set, and passes with a warning on a developer's machine, like the end-to-end test.
 */
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { GatewayChain } from "../gateway/build.js";
import { HANDSHAKE_TIMEOUT } from "../gateway/tls.js";
import { PACKAGE_LUA_DIR, startGateway, type RunningGateway } from "./support/haproxy.js";
import { dockerHaproxy, haproxy32Image, haproxy32Missing } from "./support/haproxy32.js";
import { rawExchange, wsRoundTrip } from "./support/http.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "h32_Key_R4tY7uI0oP3aS6dF9gH2jK5lZ8xC";
const missing = haproxy32Missing();

if (missing) {
  describe("the gateway on HAProxy 3.2", () => {
    it(`NOT RUN: ${missing}; bash .ci/run starts dockerd, or start one and run npm test again`, () => {
      console.warn(`\n*** HAProxy 3.2 tests NOT RUN: ${missing} ***\n`);
      expect(process.env.CI, `CI must run the HAProxy 3.2 tests, but ${missing}`).toBeFalsy();
    });
  });
} else {
  describe("the gateway on HAProxy 3.2 (Debian unstable's package, in a container)", () => {
    let up: Recorder;
    let gw: RunningGateway;
    let runner: ReturnType<typeof dockerHaproxy>;

    beforeAll(async () => {
      // The test CA and the gateway's files are under tmpdir(): mounted with the package's Lua.
      runner = dockerHaproxy(haproxy32Image(), [tmpdir(), PACKAGE_LUA_DIR]);
      up = await startRecorder();
      const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url, rpcWs: up.wsUrl } }];
      gw = await startGateway(chains, [{ name: "h32", key: KEY }], {}, ["localhost"], runner);
    }, 600_000);

    afterAll(async () => {
      await gw?.stop();
      await up?.stop();
    });

    it("is HAProxy 3.2 running the generated configuration: calls are relayed, WebSocket messages read with the policy", async () => {
      expect(runner.version()).toMatch(/^HAProxy version 3\.2\./);
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
}
