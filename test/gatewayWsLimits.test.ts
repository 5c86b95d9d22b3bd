/**
 * Limits inside a relayed WebSocket, on Debian's real HAProxy: the ws_limit Lua filter reads
 * each frame header in the tunnel and closes the socket before an oversized message or a message
 * over the key's rate is forwarded.
 */
import { connect as http2Connect, createServer as createH2cServer } from "node:http2";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import type { GatewayChain, GatewayOptions } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";
import { clientFrame } from "./support/wsFrames.js";

const KEY = "wsl_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS";
const MAX = 64 * 1024;
const call = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] });
const chains = (u: Recorder): GatewayChain[] => [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: u.url, rpcWs: u.wsUrl } }];

interface Socket {
  ws: WebSocket;
  /** Resolves with the close code (1006: closed without a close frame) once the socket is closed. */
  closed: Promise<number>;
  /** Sends a message and resolves with the reply, or with "closed" if the socket closes first. */
  ask(data: string | Buffer): Promise<string>;
}

function open(g: RunningGateway): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`wss://localhost:${g.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`, { rejectUnauthorized: false, maxPayload: 1 << 20 });
    const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
    ws.on("error", () => {});
    ws.on("unexpected-response", (_q, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    // Closed before it opened (refused, reset): said at once, not at the test's timeout.
    closed.then((code) => reject(new Error(`the WebSocket closed (${code}) before it opened`)));
    const ask = (data: string | Buffer) => new Promise<string>((r) => {
      ws.once("message", (d) => r(String(d)));
      closed.then(() => r("closed"));
      ws.send(data, () => {});
    });
    ws.on("open", () => resolve({ ws, closed, ask }));
  });
}

/** A gateway of its own for the options, stopped with its node. */
async function withGateway(over: Partial<GatewayOptions>, body: (g: RunningGateway, node: Recorder) => Promise<void>) {
  const node = await startRecorder();
  const g = await startGateway(chains(node), [{ name: "ws", key: KEY }], { maxBodyBytes: MAX, ...over });
  try {
    await body(g, node);
  } finally {
    await g.stop();
    await node.stop();
  }
}

let up: Recorder;
let gw: RunningGateway;
beforeAll(async () => {
  up = await startRecorder();
  gw = await startGateway(chains(up), [{ name: "ws", key: KEY }], { maxBodyBytes: MAX });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

describe("WebSocket messages", () => {
  it("a 16 MiB frame never reaches the node: the socket is closed before it is forwarded", async () => {
    const s = await open(gw);
    expect(JSON.parse(await s.ask(call(1))).result).toBe("0x1");
    const before = [...up.wsMessages];
    expect(await s.ask(Buffer.alloc(16 << 20, "x"))).toBe("closed");
    expect(await s.closed).toBe(1006);
    await new Promise((r) => setTimeout(r, 300));
    expect(up.wsMessages).toEqual(before);
    expect(up.wsOpen()).toBe(0);
    // The gateway still serves the next socket.
    const next = await open(gw);
    expect(JSON.parse(await next.ask(call(2))).result).toBe("0x1");
    next.ws.close();
  }, 30_000);

  it("messages up to the limit are relayed whole, and no compression is negotiated", async () => {
    const s = await open(gw);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 3, method: "eth_call", params: ["y".repeat(MAX - 100)] });
    expect(JSON.parse(await s.ask(big)).id).toBe(3);
    expect(up.wsMessages.at(-1)).toBe(Buffer.byteLength(big));
    expect(s.ws.extensions).toBe("");
    expect(up.wsHeaders.at(-1)!["sec-websocket-extensions"]).toBeUndefined();
    s.ws.close();
  });

  it("a message fragmented past the limit is never delivered whole", async () => {
    const s = await open(gw);
    const before = up.wsMessages.length;
    const piece = Buffer.alloc(40 * 1024, "z");
    s.ws.send(piece, { fin: false });
    s.ws.send(piece, { fin: false });
    s.ws.send(piece, { fin: true });
    expect(await s.closed).toBe(1006);
    await new Promise((r) => setTimeout(r, 300));
    expect(up.wsMessages.length).toBe(before);
  });

  it("messages count against the key's rate: past it the socket is closed unforwarded", () =>
    withGateway({ rateLimitPerSecond: 1 }, async (_g, node) => {
      const s = await open(_g);
      // 1/s over 10 s: the upgrade request counts 1, so 9 messages pass and the 10th closes it.
      const replies: string[] = [];
      for (let i = 0; i < 12; i++) replies.push(await s.ask(call(i)));
      expect(replies.slice(0, 9).every((r) => JSON.parse(r).result === "0x1")).toBe(true);
      expect(replies.slice(9)).toEqual(["closed", "closed", "closed"]);
      expect(node.wsMessages.length).toBe(9);
      // The key's usage: the 9 calls that went on, and one refusal for the rate.
      const usage = await runtimeCommand(join(_g.dir, "admin.sock"), "show table st_usage");
      expect(usage).toMatch(/key=ws\/eth\/ws .*http_req_cnt=1 .*gpc0=9 gpc1=0 gpc2=1 /);
      // The same budget holds for HTTP: the key is over it there too.
      const r = await fetch(`${_g.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: call(99) });
      expect(r.status).toBe(429);
      expect(node.seen.length).toBe(0);
    }), 30_000);
});

describe("subscriptions and the method policy inside WebSockets", () => {
  const sub = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "eth_subscribe", params: ["newHeads"] });
  const seen = (node: Recorder) => node.wsTexts.map((t) => JSON.parse(t));
  const refused = (id: number, method: string) => ({ jsonrpc: "2.0", id, method, params: [] });

  it("subscriptions past wsMaxSubscriptionsPerSocket and wsMaxSubscriptionsPerKey reach the node as a method it does not serve, under their ids; closed sockets give theirs back", () =>
    withGateway({ wsMaxSubscriptionsPerSocket: 3, wsMaxSubscriptionsPerKey: 5 }, async (g, node) => {
      const a = await open(g);
      for (let id = 1; id <= 4; id++) await a.ask(sub(id));
      expect(seen(node).map((m) => m.method)).toEqual(["eth_subscribe", "eth_subscribe", "eth_subscribe", "rpcstack_subscription_limit_reached"]);
      expect(seen(node)[3]).toEqual(refused(4, "rpcstack_subscription_limit_reached"));
      // The socket stays open for other calls.
      expect(JSON.parse(await a.ask(call(9))).result).toBe("0x1");
      // The key holds 3; a second socket may open 2 more, then the key's cap refuses.
      const b = await open(g);
      for (let id = 5; id <= 7; id++) await b.ask(sub(id));
      expect(seen(node).slice(5).map((m) => [m.id, m.method])).toEqual([[5, "eth_subscribe"], [6, "eth_subscribe"], [7, "rpcstack_subscription_limit_reached"]]);
      // One socket cut without a close frame, one closed: the key's subscriptions come back.
      a.ws.terminate();
      b.ws.close();
      await Promise.all([a.closed, b.closed]);
      for (let i = 0; i < 50 && node.wsOpen() > 0; i++) await new Promise((r) => setTimeout(r, 100));
      const c = await open(g);
      await c.ask(sub(8));
      expect(seen(node).at(-1)).toMatchObject({ id: 8, method: "eth_subscribe" });
      c.ws.close();
    }), 30_000);

  it("a call the method policy denies reaches the node as a method it does not serve, under a marker id, answered with its own id and method (a batch's: gatewayRefusals.test.ts); a batch's other calls go through untouched", async () => {
    const s = await open(gw);
    const before = up.wsTexts.length;
    const single = await s.ask(JSON.stringify({ jsonrpc: "2.0", id: "x", method: "debug_traceTransaction", params: ["0x1"] }));
    await s.ask('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"m\u0065thod":"admin_addPeer","params":["enode://x"]}]');
    const marker = expect.stringMatching(/^rpcstack-refused-[0-9a-f]+-\d+$/);
    expect(up.wsTexts.slice(before).map((t) => JSON.parse(t))).toEqual([
      { jsonrpc: "2.0", id: marker, method: "rpcstack_method_not_served", params: [] },
      [{ jsonrpc: "2.0", id: 1, method: "eth_chainId" }, { jsonrpc: "2.0", id: marker, method: "rpcstack_method_not_served", params: [] }],
    ]);
    const notServed = (id: unknown, method: string) => ({ jsonrpc: "2.0", id, error: { code: -32601, message: `method ${method} is not served by this gateway` } });
    expect(JSON.parse(single)).toEqual(notServed("x", "debug_traceTransaction"));
    s.ws.close();
  });
});

describe("WebSocket control frames", () => {
  it("a ping over 125 bytes (a protocol error) closes the socket; the node sees nothing of it", async () => {
    const before = up.wsTexts.length;
    const closed = await new Promise<boolean>((resolve) => {
      const s = tlsConnect({ host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", rejectUnauthorized: false }, () => {
        s.write(`GET /gateway/eth/rpc/${KEY} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`);
      });
      let upgraded = false;
      s.on("data", (d) => {
        if (upgraded || !String(d).startsWith("HTTP/1.1 101")) return;
        upgraded = true;
        s.write(clientFrame(Buffer.alloc(126, "p"), 9));
        s.write(clientFrame(Buffer.from(call(5))));
      });
      s.on("close", () => resolve(upgraded));
      s.on("error", () => {});
      setTimeout(() => (s.destroy(), resolve(false)), 5000);
    });
    expect(closed).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(up.wsTexts.length).toBe(before);
  });
});

describe("WebSocket over HTTP/2 (RFC 8441), as browsers open it when the server offers it", () => {
  it("the gateway offers extended CONNECT; a call is relayed, and an oversized frame ends the stream unforwarded", async () => {
    const session = http2Connect(`https://localhost:${gw.httpsPort}`, { rejectUnauthorized: false });
    session.on("error", () => {});
    try {
      const settings = await new Promise<{ enableConnectProtocol?: boolean }>((r) => session.once("remoteSettings", r));
      expect(settings.enableConnectProtocol).toBe(true);
      const stream = session.request({ ":method": "CONNECT", ":protocol": "websocket", ":scheme": "https", ":path": `/gateway/eth/rpc/${KEY}?secret=null`, ":authority": `localhost:${gw.httpsPort}`, "sec-websocket-version": "13" } as Record<string, string>);
      stream.on("error", () => {});
      const status = await new Promise<number>((r) => stream.once("response", (h) => r(Number(h[":status"]))));
      expect(status).toBe(200);
      const ended = new Promise<void>((r) => stream.once("close", () => r()));
      const reply = new Promise<string>((r) => stream.once("data", (d: Buffer) => r(d.subarray(2).toString())));
      stream.write(clientFrame(Buffer.from(call(41))));
      expect(JSON.parse(await reply)).toMatchObject({ id: 41, result: "0x1" });
      const before = [...up.wsMessages];
      stream.write(clientFrame(Buffer.alloc(MAX + 1, "x")));
      expect(await Promise.race([ended.then(() => "ended"), new Promise((r) => setTimeout(() => r("still open"), 5000))])).toBe("ended");
      await new Promise((r) => setTimeout(r, 300));
      expect(up.wsMessages).toEqual(before);
    } finally {
      session.destroy();
    }
  });
});

describe("WebSocket on a Cosmos public hostname", () => {
  it("Tendermint's /websocket relays a call, and an oversized frame closes it unforwarded", async () => {
    const node = await startRecorder();
    const host = "rpc.cosmos.test";
    const g = await startGateway([{ path: "cosmoshub", chainId: "COSMOSHUB", kind: "cosmos", upstreams: { rpcHttp: node.url }, hostnames: { tendermintRpc: host } }], [{ name: "ws", key: KEY }], { maxBodyBytes: MAX }, ["localhost", host]);
    try {
      const ws = new WebSocket(`wss://127.0.0.1:${g.httpsPort}/websocket`, { servername: host, headers: { Host: host }, rejectUnauthorized: false } as WebSocket.ClientOptions);
      const closed = new Promise<number>((r) => ws.on("close", r));
      ws.on("error", () => {});
      await new Promise((r) => ws.on("open", r));
      const reply = new Promise((r) => ws.once("message", (d) => r(JSON.parse(String(d)))));
      ws.send(call(7));
      expect(await reply).toMatchObject({ id: 7, result: "0x1" });
      ws.send(Buffer.alloc(MAX + 1, "x"));
      expect(await closed).toBe(1006);
      expect(node.wsMessages).toEqual([Buffer.byteLength(call(7))]);
    } finally {
      await g.stop();
      await node.stop();
    }
  });
});

describe("gRPC messages on a Cosmos gRPC hostname", () => {
  const host = "grpc.cosmos.test";
  const message = (size: number) => Buffer.concat([Buffer.from([0, size >>> 24, (size >>> 16) & 255, (size >>> 8) & 255, size & 255]), Buffer.alloc(size, 7)]);

  /** An h2c gRPC node that records the bytes each stream delivered, behind a gateway of its own. */
  async function withGrpc(over: Partial<GatewayOptions>, body: (send: (messages: Buffer[]) => Promise<string>, received: number[]) => Promise<void>) {
    const received: number[] = [];
    const grpc = createH2cServer();
    grpc.on("stream", (stream) => {
      let bytes = 0;
      stream.on("data", (d: Buffer) => (bytes += d.length));
      stream.on("close", () => received.push(bytes));
      stream.on("end", () => {
        // The gateway may reset the stream while its last bytes are read: answering it then throws.
        if (stream.destroyed || stream.closed) return;
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true });
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
        stream.end();
      });
      stream.on("error", () => {});
    });
    await new Promise<void>((r) => grpc.listen(0, "127.0.0.1", r));
    // The chain's Tendermint RPC (a recorder) is what its health check asks.
    const node = await startRecorder();
    const g = await startGateway([{ path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: node.url, grpc: `http://127.0.0.1:${(grpc.address() as { port: number }).port}` }, hostnames: { grpc: host } }], [{ name: "ws", key: KEY }], { maxBodyBytes: MAX, ...over }, ["localhost", host]);
    // One stream carrying `messages`, written one after the other; resolves with its fate.
    const send = (messages: Buffer[]) => new Promise<string>((resolve) => {
      const session = http2Connect(`https://127.0.0.1:${g.httpsPort}`, { servername: host, rejectUnauthorized: false });
      session.on("error", () => resolve("error"));
      const s = session.request({ ":method": "POST", ":path": "/cosmos.bank.v1beta1.Query/Balance", ":authority": host, "content-type": "application/grpc", te: "trailers" });
      s.on("response", (h) => s.on("end", () => (session.close(), resolve(String(h[":status"])))));
      s.on("error", () => (session.close(), resolve("reset")));
      s.on("close", () => resolve(s.rstCode ? "reset" : "closed"));
      s.resume();
      for (const m of messages) s.write(m);
      s.end();
    });
    try {
      await body(send, received);
    } finally {
      await g.stop();
      await node.stop();
      grpc.close();
    }
  }

  it("a message over the limit ends the stream before any of it reaches the node; a small one is relayed", () =>
    withGrpc({}, async (send, received) => {
      expect(await send([message(1024)])).toBe("200");
      expect(received).toEqual([1029]);
      // 413 when the buffer had filled before the headers' rules ran: the same fate, answered.
      expect(["reset", "error", "closed", "413"]).toContain(await send([message(2 << 20)]));
      await new Promise((r) => setTimeout(r, 300));
      // At most the request's headers reached the node: none of the message's bytes.
      expect(received.slice(1).every((b) => b === 0)).toBe(true);
    }), 30_000);

  it("a stream's messages together are bounded by maxBodyKiB, like a body: the one that would pass it ends the stream unforwarded", () =>
    withGrpc({}, async (send, received) => {
      const piece = message(40 * 1024);
      // 413 when the buffer had filled before the headers' rules ran (limits.ts bodyRules: a full buffer did not fit).
      expect(["reset", "error", "closed", "413"]).toContain(await send([piece, piece, piece, piece]));
      await new Promise((r) => setTimeout(r, 300));
      // What reached the node (nothing, when the stream ended before its request went out) is within the bound.
      expect(received.every((b) => b <= MAX)).toBe(true);
    }), 30_000);

  it("each message counts against the address's rate: a stream of many small ones is ended past it", () =>
    withGrpc({ rateLimitPerSecond: 1 }, async (send, received) => {
      // 1 call/s over 10 s: the request counts one, so at most 9 of these 40 messages may pass.
      expect(["reset", "error", "closed"]).toContain(await send(Array.from({ length: 40 }, () => message(16))));
      await new Promise((r) => setTimeout(r, 300));
      expect(received.every((b) => b <= 9 * 21)).toBe(true);
    }), 30_000);
});

describe("idle WebSockets with the filter in the tunnel", () => {
  it("a socket the node keeps sending on outlives the idle timeout; a silent one does not", async () => {
    // A node that pushes a message every 300 ms on the first socket and stays silent on the next.
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    let sockets = 0;
    server.on("connection", (s) => {
      if (sockets++ > 0) return;
      const t = setInterval(() => s.send("head"), 300);
      s.on("close", () => clearInterval(t));
    });
    await new Promise((r) => server.on("listening", r));
    const wsUrl = `ws://127.0.0.1:${(server.address() as { port: number }).port}`;
    const node = await startRecorder();
    const g = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: wsUrl } }], [{ name: "ws", key: KEY }], { wsIdleTimeoutSeconds: 2 });
    try {
      const pushed = await open(g);
      let heads = 0;
      pushed.ws.on("message", () => heads++);
      const silent = await open(g);
      // The silent one closes (within the test's time limit); the pushed one outlives it by more
      // than another idle timeout.
      await silent.closed;
      expect(pushed.ws.readyState).toBe(WebSocket.OPEN);
      await new Promise((r) => setTimeout(r, 2500));
      expect(pushed.ws.readyState).toBe(WebSocket.OPEN);
      expect(heads).toBeGreaterThan(10);
      pushed.ws.close();
    } finally {
      await g.stop();
      await node.stop();
      server.close();
    }
  }, 20_000);
});
