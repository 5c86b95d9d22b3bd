/**
 * Limits that hold whatever the framing, on Debian's real HAProxy: bodies (chunked, HTTP/2
 * without Content-Length, slow), batches counted call by call, key guessing, connections per
 * address, WebSocket connections per key and idle sockets, and a node that dies.
 */
import { connect as http2Connect } from "node:http2";
import { request as httpsRequest } from "node:https";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { GatewayChain, GatewayOptions } from "../gateway/build.js";
import { HEALTH_CHECK_INTERVAL_MS, frozenNodeDownMs } from "../gateway/upstreams.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "lim_Key_Q8wE3rT6yU1iO4pA7sD0fG2hJ5kL";
const KEYS = [{ name: "bob", key: KEY }];
const MiB = 1 << 20;
const call = (method: string, id = 1) => ({ jsonrpc: "2.0", id, method, params: [] });

let up: Recorder;
let gw: RunningGateway;
const chains = (u: Recorder): GatewayChain[] => [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: u.url, rpcWs: u.wsUrl } }];

beforeAll(async () => {
  up = await startRecorder();
  gw = await startGateway(chains(up), KEYS, { maxBodyBytes: 64 * 1024, wsMaxConnectionsPerKey: 3, wsIdleTimeoutSeconds: 2, maxConnectionsPerAddress: 40 });
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

/**
 * A chunked POST (no Content-Length) of `size` bytes; resolves with the status. With `start`, the
 * body opens with it (a call the policy allows) and the rest follows a moment later.
 */
function chunkedPost(size: number, headers: Record<string, string> = {}, start?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const r = httpsRequest({ host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", path: `/gateway/eth/rpc-http/${KEY}`, method: "POST", rejectUnauthorized: false, headers: { "Content-Type": "application/json", "Transfer-Encoding": "chunked", ...headers } }, (res) => (res.resume(), resolve(res.statusCode!)));
    // HAProxy answers and closes while the client is still sending: the reset can overtake the
    // answer on a busy machine. Give the answer a moment, else report the reset as 0.
    r.on("error", (e: any) => (e.code === "EPIPE" || e.code === "ECONNRESET" ? setTimeout(() => resolve(0), 300) : reject(e)));
    const piece = Buffer.alloc(64 * 1024, "x");
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += piece.length;
        if (!r.write(piece)) return r.once("drain", pump);
      }
      r.end();
    };
    if (!start) return pump();
    r.write(start);
    sent = start.length;
    setTimeout(pump, 300);
  });
}

describe("bodies", () => {
  /** What the client got: 413, or (when the reset overtook it) what the gateway logged it sent. */
  async function expect413(status: number) {
    if (status === 0) await new Promise((r) => setTimeout(r, 200));
    if (status === 0) expect(gw.logs()).toMatch(/ 413 \d+ .*key=bob chain=eth iface=rpc-http POST/);
    else expect(status).toBe(413);
  }

  it("a 5 MiB chunked body gets 413 and never reaches the node", async () => {
    const before = up.seen.length;
    await expect413(await chunkedPost(5 * MiB));
    expect(up.seen.length).toBe(before);
  });

  it("a 64 MiB chunked body with an Upgrade header (not a WebSocket handshake) gets 413 and never reaches the node", async () => {
    const before = up.seen.length;
    await expect413(await chunkedPost(64 * MiB, { Upgrade: "websocket" }, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["'));
    expect(up.seen.length).toBe(before);
  }, 30_000);

  it("an HTTP/2 body without Content-Length is bounded the same way; a small one is relayed", async () => {
    const h2 = (body: Buffer) => new Promise<number>((resolve, reject) => {
      const session = http2Connect(gw.base, { rejectUnauthorized: false });
      session.on("error", reject);
      const s = session.request({ ":method": "POST", ":path": `/gateway/eth/rpc-http/${KEY}`, "content-type": "application/json" });
      s.on("response", (h) => (resolve(Number(h[":status"])), session.close()));
      s.on("error", () => {});
      s.end(body);
    });
    const before = up.seen.length;
    expect(await h2(Buffer.alloc(5 * MiB, " "))).toBe(413);
    expect(up.seen.length).toBe(before);
    expect(await h2(Buffer.from(JSON.stringify(call("eth_chainId"))))).toBe(200);
    expect(up.seen.length).toBe(before + 1);
  });

  it("a body that trickles in gets 408 after the body timeout and never reaches the node", async () => {
    const before = up.seen.length;
    const status = await new Promise<string>((resolve, reject) => {
      const s: TLSSocket = tlsConnect({ host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", rejectUnauthorized: false }, () => {
        s.write(`POST /gateway/eth/rpc-http/${KEY} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"`);
      });
      let data = "";
      // Read when the head is in: HAProxy 3.2 sends the 408 but leaves the connection to the client to close.
      s.on("data", (d) => (data += d) && data.includes("\r\n\r\n") && (s.destroy(), resolve(data.split("\r\n")[0])));
      s.on("error", reject);
    });
    // The gateway's JSON error page (HAProxy's own would say "Request Time-out").
    expect(status).toBe("HTTP/1.1 408 Request Timeout");
    expect(up.seen.length).toBe(before);
  }, 20_000);
});

describe("headers and URI", () => {
  const send = (extra: number, http2 = false, query = "") => {
    const headers = { "content-type": "application/json", "x-pad": "p".repeat(extra) };
    const body = JSON.stringify(call("eth_chainId"));
    const path = `/gateway/eth/rpc-http/${KEY}${query}`;
    if (!http2) return fetch(`${gw.base}${path}`, { method: "POST", headers, body }).then(async (r) => ({ status: r.status, body: await r.text() }));
    return new Promise<{ status: number; body: string }>((resolve, reject) => {
      const session = http2Connect(gw.base, { rejectUnauthorized: false });
      session.on("error", reject);
      const s = session.request({ ":method": "POST", ":path": path, ...headers });
      let text = "";
      let status = 0;
      s.on("response", (h) => (status = Number(h[":status"])));
      s.on("data", (d) => (text += d));
      s.on("end", () => (session.close(), resolve({ status, body: text })));
      s.on("error", reject);
      s.end(body);
    });
  };

  it("headers over 16 KiB get a JSON 431 and never reach the node, over HTTP/1.1 and HTTP/2; 15 KiB are relayed", async () => {
    const before = up.seen.length;
    for (const http2 of [false, true]) {
      const big = await send(20 * 1024, http2);
      expect(big.status).toBe(431);
      expect(JSON.parse(big.body).error.message).toMatch(/headers too large/);
    }
    expect(up.seen.length).toBe(before);
    expect((await send(15 * 1024)).status).toBe(200);
    expect(up.seen.length).toBe(before + 1);
  });

  it("a URI over 16 KiB gets a JSON 414 and never reaches the node, over HTTP/1.1 and HTTP/2, also past HAProxy's own buffer; 15 KiB are relayed", async () => {
    const before = up.seen.length;
    for (const http2 of [false, true]) {
      const long = await send(0, http2, `?q=${"u".repeat(40 * 1024)}`);
      expect(long.status).toBe(414);
      expect(JSON.parse(long.body).error.message).toMatch(/URI longer than 16384 bytes/);
    }
    // Past HAProxy's buffer its HTTP/1 parser answers by itself, before any rule: the same JSON error.
    const huge = await send(0, false, `?q=${"u".repeat(200 * 1024)}`);
    expect(huge.status).toBe(414);
    expect(JSON.parse(huge.body)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32014, message: "URI too long" } });
    expect(up.seen.length).toBe(before);
    expect((await send(0, false, `?q=${"u".repeat(15 * 1024)}`)).status).toBe(200);
    expect(up.seen.length).toBe(before + 1);
  });
});

describe("WebSockets", () => {
  const open = () => new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`, { rejectUnauthorized: false });
    ws.on("open", () => resolve(ws));
    ws.on("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.on("error", reject);
  });

  it("a key holds at most wsMaxConnectionsPerKey sockets; the next gets 429", async () => {
    const held = [await open(), await open(), await open()];
    try {
      await expect(open()).rejects.toThrow("HTTP 429");
    } finally {
      // Until HAProxy has seen them close, they still count against the key for the next test.
      await Promise.all(held.map((w) => new Promise((r) => (w.once("close", r), w.close()))));
    }
  });

  it("an idle socket is closed after the idle timeout", async () => {
    const ws = await open();
    const t0 = Date.now();
    await new Promise((r) => ws.on("close", r));
    expect(Date.now() - t0).toBeLessThan(6000);
  }, 10_000);
});

describe("connections and failover", () => {
  it("one address holds at most maxConnectionsPerAddress connections", async () => {
    const socks: TLSSocket[] = [];
    const results = await Promise.all(Array.from({ length: 60 }, () => new Promise<boolean>((resolve) => {
      const s = tlsConnect({ host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", rejectUnauthorized: false }, () => resolve(true));
      socks.push(s);
      s.on("error", () => resolve(false));
      s.on("close", () => resolve(false));
    })));
    socks.forEach((s) => s.destroy());
    expect(results.filter(Boolean).length).toBeLessThanOrEqual(40);
    expect(results.filter(Boolean).length).toBeGreaterThan(20);
    await new Promise((r) => setTimeout(r, 300));
  });

  it("a node that dies gets 503 at once, not retries", async () => {
    const node = await startRecorder();
    const g = await startGateway(chains(node), KEYS, { checkIntervalMs: 60_000 });
    try {
      const send = () => fetch(`${g.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(call("eth_chainId")) });
      expect((await send()).status).toBe(200);
      await node.stop();
      const t0 = Date.now();
      const res = await send();
      expect(res.status).toBe(503);
      expect((await res.json()).error.message).toMatch(/unavailable/);
      expect(Date.now() - t0).toBeLessThan(1000);
    } finally {
      await g.stop();
    }
  });
});

describe("one address cannot starve the others", () => {
  it("1,200 HTTP/2 streams with slow bodies from one address (keyed and on a Tendermint hostname) leave another address's call answered at once", async () => {
    const node = await startRecorder();
    const host = "rpc.starve.test";
    // 202 buffers (2 x maxConnections + 2) of 128 KiB: a pool one address could fill before.
    const g = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url }, hostnames: {} }, { path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: node.url }, hostnames: { tendermintRpc: host } }], KEYS, { maxConnections: 100, maxBodyBytes: 64 * 1024 }, ["localhost", host]);
    const sessions: ReturnType<typeof http2Connect>[] = [];
    try {
      // Streams answered 429 (over the address's bound), reset (over the connection's), or otherwise.
      const attacker = { tooMany: 0, reset: 0, ended: 0 };
      for (let c = 0; c < 12; c++) {
        const name = c % 2 ? host : "localhost";
        const session = http2Connect(`https://${name}:${g.httpsPort}`, { rejectUnauthorized: false, localAddress: "127.0.0.1", host: "127.0.0.1", servername: name, peerMaxConcurrentStreams: 1000 } as any);
        session.on("error", () => {});
        sessions.push(session);
        for (let i = 0; i < 100; i++) {
          const s = session.request({ ":method": "POST", ":path": c % 2 ? "/" : `/gateway/eth/rpc-http/${KEY}`, ":authority": name, "content-type": "application/json", "content-length": "60000" });
          s.on("response", (h) => (h[":status"] === 429 ? attacker.tooMany++ : attacker.ended++));
          s.on("error", () => attacker.reset++);
          s.write(`{"jsonrpc":"2.0","id":${i},"method":"eth_chainId","params":["${"x".repeat(1000)}`);
        }
      }
      await new Promise((r) => setTimeout(r, 1500));
      // Another address: 127.0.0.2 reaches the gateway's 127.0.0.1 listener over loopback.
      const victim = http2Connect(`https://localhost:${g.httpsPort}`, { rejectUnauthorized: false, localAddress: "127.0.0.2" } as any);
      sessions.push(victim);
      const answer = await new Promise<number>((resolve, reject) => {
        const s = victim.request({ ":method": "POST", ":path": `/gateway/eth/rpc-http/${KEY}`, "content-type": "application/json" });
        s.on("response", (h) => resolve(Number(h[":status"])));
        s.on("error", reject);
        s.end(JSON.stringify(call("eth_chainId")));
      });
      expect(answer).toBe(200);
      // Answered while the attacker's admitted streams still wait for their bodies (408 after 10 s):
      // no buffer had to come free. Past the bounds, the attacker's streams were refused.
      expect(attacker.ended).toBe(0);
      expect(attacker.tooMany).toBeGreaterThan(0);
      expect(attacker.reset).toBeGreaterThan(0);
      expect(node.seen.length).toBe(1);
    } finally {
      sessions.forEach((s) => s.destroy());
      await g.stop();
      await node.stop();
    }
  }, 30_000);
});

describe("a node that freezes", () => {
  it("accepting connections but never answering, it is marked down within the check bound: calls it holds end (HAProxy 3.2 closes their connections unanswered), later ones get 503 at once", async () => {
    const node = await startRecorder();
    const g = await startGateway(chains(node), KEYS, { checkIntervalMs: HEALTH_CHECK_INTERVAL_MS });
    // One connection per call: a call on a reused connection may be closed unanswered instead (HAProxy lets the client retry it).
    const send = () => new Promise<{ status: number; body: string }>((resolve) => {
      const r = httpsRequest({ host: "127.0.0.1", port: g.httpsPort, servername: "localhost", path: `/gateway/eth/rpc-http/${KEY}`, method: "POST", agent: false, headers: { "Content-Type": "application/json" } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      r.on("error", (e) => resolve({ status: 0, body: e.message }));
      r.end(JSON.stringify(call("eth_chainId")));
    });
    try {
      expect((await send()).status).toBe(200);
      node.freeze();
      const t0 = Date.now();
      // Marking the node down ends the streams it holds, the client's side with them: no answer.
      expect(await send()).toEqual({ status: 0, body: "socket hang up" });
      // The bound the check settings give (interval, two timed-out checks, the fast interval), plus a second for a loaded machine.
      expect(Date.now() - t0).toBeLessThan(frozenNodeDownMs(HEALTH_CHECK_INTERVAL_MS) + 1000);
      const t1 = Date.now();
      const later = await send();
      expect(later.status).toBe(503);
      expect(JSON.parse(later.body).error.message).toMatch(/unavailable/);
      expect(Date.now() - t1).toBeLessThan(1000);
    } finally {
      await g.stop();
      await node.stop();
    }
  }, 30_000);
});

/** A gateway of its own (limits that would disturb the shared one), stopped with its node. */
async function withOwnGateway(over: Partial<GatewayOptions>, body: (g: RunningGateway, node: Recorder, send: (b: unknown) => Promise<Response>) => Promise<void>) {
  const node = await startRecorder();
  const g = await startGateway(chains(node), KEYS, over);
  const send = (b: unknown) => fetch(`${g.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(b) });
  try {
    await body(g, node, send);
  } finally {
    await g.stop();
    await node.stop();
  }
}

describe("per key and per address rates", () => {
  it("answers 429 past the per-key limit without reaching the upstream", () =>
    withOwnGateway({ rateLimitPerSecond: 1 }, async (_g, node, send) => {
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++) {
        const r = await send(call("eth_chainId", i));
        statuses.push(r.status);
        if (r.status === 429) {
          expect(r.headers.get("content-type")).toBe("application/json");
          expect((await r.json()).error.message).toMatch(/rate limit/);
        } else await r.arrayBuffer();
      }
      // 1 request/s over 10 s: the first 10 pass, the rest are refused.
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
      expect(statuses.slice(11)).toEqual(Array(3).fill(429));
      expect(node.seen.length).toBeLessThanOrEqual(11);
    }));

  it("batches count call by call against the per-key rate", () =>
    withOwnGateway({ rateLimitPerSecond: 1 }, async (_g, node, send) => {
      expect((await send(Array.from({ length: 8 }, (_, i) => call("eth_chainId", i)))).status).toBe(200);
      // 1 call/s over 10 s: 8 are spent; a batch of 5 and then a single call are over it.
      expect((await send(Array.from({ length: 5 }, (_, i) => call("eth_chainId", i)))).status).toBe(429);
      const single = await send(call("eth_chainId"));
      expect(single.status).toBe(429);
      expect((await single.json()).error.message).toMatch(/rate limit/);
      expect(node.seen.length).toBe(1);
    }));

  it("on a Tendermint RPC hostname, batches count call by call against the address's rate", async () => {
    const node = await startRecorder();
    const host = "rpc.rates.test";
    const g = await startGateway([{ path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: node.url }, hostnames: { tendermintRpc: host } }], KEYS, { rateLimitPerSecond: 1 }, ["localhost", host]);
    const send = (b: unknown) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = httpsRequest({ host: "127.0.0.1", port: g.httpsPort, servername: host, path: "/", method: "POST", rejectUnauthorized: false, headers: { Host: host, "Content-Type": "application/json" } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      r.on("error", reject);
      r.end(JSON.stringify(b));
    });
    try {
      expect((await send(Array.from({ length: 8 }, (_, i) => call("status", i)))).status).toBe(200);
      // 1 call/s over 10 s: 8 are spent; a batch of 5 and then a single call are over it.
      expect((await send(Array.from({ length: 5 }, (_, i) => call("status", i)))).status).toBe(429);
      const single = await send(call("status"));
      expect(single.status).toBe(429);
      expect(JSON.parse(single.body).error.message).toMatch(/rate limit exceeded for this address/);
      expect(node.seen.length).toBe(1);
      // Over its rate, an address is refused at once, not after waiting for a body it never sends.
      expect((await send(Array.from({ length: 3 }, (_, i) => call("status", i)))).status).toBe(429);
      const t0 = Date.now();
      const partial = await new Promise<number>((resolve, reject) => {
        const r = httpsRequest({ host: "127.0.0.1", port: g.httpsPort, servername: host, path: "/", method: "POST", rejectUnauthorized: false, headers: { Host: host, "Content-Type": "application/json", "Content-Length": "100" } }, (res) => (res.resume(), resolve(res.statusCode!)));
        r.on("error", reject);
        r.write("[");
      });
      expect(partial).toBe(429);
      expect(Date.now() - t0).toBeLessThan(5000);
    } finally {
      await g.stop();
      await node.stop();
    }
  });

  it("500 wrong keys from one address end in 429, the key map and the node untouched", () =>
    withOwnGateway({}, async (g, node) => {
      const statuses: number[] = [];
      for (let i = 0; i < 500; i++) {
        const r = await fetch(`${g.base}/gateway/eth/rpc-http/guess${String(i).padStart(30, "0")}`, { method: "POST", body: "{}" });
        statuses.push(r.status);
        await r.arrayBuffer();
      }
      expect(statuses.slice(0, 60)).toEqual(Array(60).fill(401));
      expect(statuses.slice(70)).toEqual(Array(430).fill(429));
      expect(node.seen.length).toBe(0);
    }), 60_000);
});
