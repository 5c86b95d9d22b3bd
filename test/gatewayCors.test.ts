/**
 * A specific gateway.corsOrigins list on Debian's real HAProxy: an allowed origin is echoed (with
 * Vary: Origin), any other origin gets no Access-Control-Allow-Origin, and preflights never reach
 * the node either way.
 */
import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "cor_Key_H4jK7lZ0xC3vB6nM9qW2eR5tY8uI";
const ALLOWED = "https://app.example.org";

let up: Recorder;
let gw: RunningGateway;
beforeAll(async () => {
  up = await startRecorder();
  gw = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url } }], [{ name: "web", key: KEY }], { corsOrigins: [ALLOWED, "http://localhost:5173"] });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

function send(method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const r = request({ host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", path: `/gateway/eth/rpc-http/${KEY}`, method, headers, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    r.on("error", reject);
    r.end(body);
  });
}

const preflight = (origin: string) => send("OPTIONS", { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" });
const post = (origin: string) => send("POST", { Origin: origin, "Content-Type": "application/json" }, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }));

describe("gateway.corsOrigins as a list", () => {
  it("an allowed origin is echoed on the preflight and the answer, with Vary: Origin", async () => {
    const before = up.seen.length;
    const pre = await preflight(ALLOWED);
    expect(pre.status).toBe(204);
    expect(pre.headers["access-control-allow-origin"]).toBe(ALLOWED);
    expect(pre.headers.vary).toMatch(/Origin/);
    expect(up.seen.length).toBe(before);
    const res = await post(ALLOWED);
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe(ALLOWED);
    expect(up.seen.length).toBe(before + 1);
  });

  it("another origin gets no Access-Control-Allow-Origin, and its preflight does not reach the node", async () => {
    const before = up.seen.length;
    const pre = await preflight("https://evil.example.net");
    expect(pre.headers["access-control-allow-origin"]).toBeUndefined();
    const res = await post("https://evil.example.net");
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
    expect(res.headers.vary).toMatch(/Origin/);
    // The POST itself is relayed (CORS is the browser's check); the preflight never is.
    expect(up.seen.length).toBe(before + 1);
    expect(up.seen.at(-1)!.method).toBe("POST");
  });
});
