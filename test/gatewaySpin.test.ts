/**
 * Sockets that end while the gateway holds part of a WebSocket message (the ws_limit filter,
 * gateway/lua/limits.lua): whichever side ends them, and whatever part of a frame is held, each
 * frees its session at once, so that HAProxy's connection count falls back and it goes idle.
 * Before the fix, a socket the gateway closed kept its session spinning at full CPU for as long as
 * the node side stayed open, and one its client dropped stayed until a timeout. Checked through
 * HAProxy's runtime API (show info), on one and two threads.
 */
import { createHash } from "node:crypto";
import { createServer, type Socket } from "node:net";
import { join } from "node:path";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { BODY_TIMEOUT, UNFINISHED_MESSAGES_PER_ADDRESS } from "../gateway/limits.js";
import type { GatewayChain } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "spin_Key_Z3xC6vB9nM2qW5eR8tY1uI4oP7aS";
const ADDRESSES = 6;
const mask = [1, 2, 3, 4];
/** Parts of a message a client may leave behind: every place a frame can be cut. */
const PARTS: Record<string, Buffer> = {
  "one byte of a header": Buffer.from([0x81]),
  "a header without its length": Buffer.from([0x81, 0xfe]),
  "a whole header, no payload": Buffer.from([0x81, 0xfe, 0xea, 0x60, ...mask]),
  "a header and 1,000 of its 60,000 bytes": Buffer.concat([Buffer.from([0x81, 0xfe, 0xea, 0x60, ...mask]), Buffer.alloc(1000, 0x20)]),
  "a first fragment, then part of the next": Buffer.concat([Buffer.from([0x01, 0x8a, ...mask]), Buffer.alloc(10, 0x20), Buffer.from([0x00, 0xfe, 0x10])]),
};
/** What a gateway held before: the level a test waits for, and how long it may take. */
const SETTLE_MS = (parseInt(BODY_TIMEOUT, 10) * 1000) / 2;

let node: Recorder;
beforeAll(async () => {
  node = await startRecorder();
}, 60_000);
afterAll(async () => {
  await node?.stop();
});

const chains = (u: Recorder): GatewayChain[] => [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: u.url, rpcWs: u.wsUrl } }];

async function info(g: RunningGateway) {
  const text = await runtimeCommand(join(g.dir, "admin.sock"), "show info");
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, "m").exec(text)?.[1]);
  return { currConns: field("CurrConns"), idlePct: field("Idle_pct") };
}

/**
 * Waits until the gateway holds `conns` connections and is idle, for at most half the body
 * timeout (after which the gateway drops a held message in any case), and answers what it last saw.
 */
async function settled(g: RunningGateway, conns: number) {
  const end = Date.now() + SETTLE_MS;
  for (;;) {
    const now = await info(g);
    if ((now.currConns === conns && now.idlePct >= 50) || Date.now() > end) return now;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Opens a WebSocket by hand from `address` and sends `bytes` after the 101; resolves with the socket. */
function holdPart(g: RunningGateway, address: string, bytes: Buffer): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: "127.0.0.1", port: g.httpsPort, servername: "localhost", rejectUnauthorized: false, localAddress: address } as never, () => {
      s.write(`GET /gateway/eth/rpc/${KEY}?secret=null HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    });
    let head = "";
    const onData = (d: Buffer) => {
      head += d.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      s.off("data", onData);
      if (!head.startsWith("HTTP/1.1 101")) return reject(new Error(`no upgrade: ${head.split("\r\n")[0]}`));
      s.write(bytes, () => resolve(s));
    };
    s.on("data", onData);
    s.on("error", reject);
  });
}

/** Whether a socket is still open a moment after it sent its part (the gateway had it closed otherwise). */
const stillOpen = (s: TLSSocket) => new Promise<boolean>((r) => {
  if (s.destroyed || s.readableEnded) return r(false);
  const t = setTimeout(() => r(true), 300);
  s.once("close", () => (clearTimeout(t), r(false)));
  s.once("end", () => (clearTimeout(t), r(false)));
});

for (const threads of [1, 2]) {
  describe(`WebSockets that end holding part of a message, on ${threads} thread${threads > 1 ? "s" : ""}`, () => {
    let g: RunningGateway;
    const sockets: TLSSocket[] = [];
    beforeAll(async () => {
      g = await startGateway(chains(node), [{ name: "spin", key: KEY }], { threads, maxBodyBytes: 64 * 1024, wsMaxConnectionsPerKey: 1000 });
    }, 60_000);
    afterAll(async () => {
      for (const s of sockets.splice(0)) s.destroy();
      await g?.stop();
    });

    it("dropped by their clients, wherever the frame was cut: every session is freed and HAProxy goes idle", async () => {
      const before = await info(g);
      const held: TLSSocket[] = [];
      for (const [a, part] of Object.values(PARTS).entries()) {
        for (let k = 0; k < UNFINISHED_MESSAGES_PER_ADDRESS; k++) held.push(await holdPart(g, `127.0.3.${10 + a}`, part));
      }
      sockets.push(...held);
      expect(await settled(g, before.currConns + held.length)).toMatchObject({ currConns: before.currConns + held.length });
      for (const s of held) s.destroy();
      const after = await settled(g, before.currConns);
      expect(after.currConns).toBe(before.currConns);
      expect(after.idlePct).toBeGreaterThanOrEqual(50);
    });

    it("closed by the gateway past the address's bound: their sessions are freed while the client keeps its end open", async () => {
      const before = await info(g);
      const extra = 4;
      const part = PARTS["a header and 1,000 of its 60,000 bytes"];
      const opened: TLSSocket[] = [];
      for (let a = 0; a < ADDRESSES; a++) {
        for (let k = 0; k < UNFINISHED_MESSAGES_PER_ADDRESS + extra; k++) opened.push(await holdPart(g, `127.0.4.${10 + a}`, part));
      }
      sockets.push(...opened);
      const open = await Promise.all(opened.map(stillOpen));
      expect(open.filter((o) => !o).length).toBe(ADDRESSES * extra);
      const kept = ADDRESSES * UNFINISHED_MESSAGES_PER_ADDRESS;
      const after = await settled(g, before.currConns + kept);
      expect(after.currConns).toBe(before.currConns + kept);
      expect(after.idlePct).toBeGreaterThanOrEqual(50);
      // The freed ones no longer count against their address: once the others end, it may hold as many again.
      for (const s of opened) s.destroy();
      expect((await settled(g, before.currConns)).currConns).toBe(before.currConns);
      // Past the second in which the address opened those (WebSockets opened per second are bounded too).
      await new Promise((r) => setTimeout(r, 2000));
      const again = [];
      for (let k = 0; k < UNFINISHED_MESSAGES_PER_ADDRESS; k++) again.push(await holdPart(g, "127.0.4.10", part));
      sockets.push(...again);
      expect(await Promise.all(again.map(stillOpen))).toEqual(Array(UNFINISHED_MESSAGES_PER_ADDRESS).fill(true));
    });
  });
}

/**
 * A WebSocket node that completes the handshake and then stops reading until `resume()`: the
 * gateway's buffer toward it fills while the client sends on.
 */
async function startSlowNode() {
  let received = 0;
  const held: Socket[] = [];
  const server = createServer((s) => {
    let head = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      head = Buffer.concat([head, d]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      s.off("data", onData);
      const key = /sec-websocket-key: *(\S+)/i.exec(head.subarray(0, end).toString())?.[1];
      if (!key) return void s.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
      const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
      s.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
      received += head.length - end - 4;
      s.on("data", (more: Buffer) => (received += more.length));
      s.pause();
      held.push(s);
    };
    s.on("data", onData);
    s.on("error", () => {});
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `ws://127.0.0.1:${(server.address() as { port: number }).port}`,
    received: () => received,
    resume: () => held.forEach((s) => s.resume()),
    stop: () => new Promise<void>((r) => (held.forEach((s) => s.destroy()), server.close(() => r()))),
  };
}

describe("a node that reads slowly", () => {
  it("does not make the gateway take its client for gone: the socket stays open while the buffer is full, and the messages flow once the node reads", async () => {
    const slow = await startSlowNode();
    const g = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: slow.url } }], [{ name: "spin", key: KEY }], { maxBodyBytes: 64 * 1024 });
    const ws = new WebSocket(`wss://localhost:${g.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`, { rejectUnauthorized: false });
    ws.on("error", () => {});
    try {
      await new Promise((r, j) => (ws.once("open", r), ws.once("unexpected-response", () => j(new Error("no upgrade")))));
      const big = "a".repeat(50_000);
      for (let i = 0; i < 100; i++) ws.send(JSON.stringify({ jsonrpc: "2.0", id: i, method: "eth_call", params: [big] }));
      // Long enough for the buffers toward the node to fill, and the client's next reads with them.
      await new Promise((r) => setTimeout(r, 1500));
      expect(ws.readyState).toBe(WebSocket.OPEN);
      const before = slow.received();
      slow.resume();
      const t0 = Date.now();
      while (slow.received() < before + 1_000_000 && ws.readyState === WebSocket.OPEN && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 100));
      expect(ws.readyState).toBe(WebSocket.OPEN);
      expect(slow.received()).toBeGreaterThan(before + 1_000_000);
    } finally {
      ws.terminate();
      await g.stop();
      await slow.stop();
    }
  });
});
