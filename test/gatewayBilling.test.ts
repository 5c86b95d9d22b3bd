/**
 * The bill against what the node got (docs/accounts.md, "One rule for the bill"): a seeded random
 * mix of calls from four keys, over HTTP/1.1, HTTP/2 and WebSockets (messages pipelined in one
 * write and frames split across writes), with denied methods alone and in batches, batches and
 * bodies too large, paths no route takes and quotas run past, against a stub node that counts the
 * calls it receives per key (and per badge). Then, per key, the node's count must equal usage's
 * calls and the quota spent, and the badge's what its allowance has left, exactly.
 */
import { createServer, type Server } from "node:http";
import { connect as http2Connect, type ClientHttp2Session } from "node:http2";
import { join } from "node:path";
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from "node:tls";
import { WebSocketServer } from "ws";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { makeBadge, newSigningKey } from "./support/badges.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { random } from "./support/jsonFuzz.js";
import { textFrame, upgradeRaw } from "./support/wsFrames.js";
import { freePort } from "./support/net.js";

const KEYS = [0, 1, 2, 3].map((k) => ({ name: `k${k}`, key: `billing_Key${k}_Q4w8E2r6T0y3U7i1O5p9A4s8` }));
/** k0 and k2 run past their quotas; k1 and k3 have none. */
const QUOTAS = [{ name: "k0", calls: 40, per: "day" as const }, { name: "k2", calls: 25, per: "day" as const }];
const MAX_BATCH = 5;
/** The fifth caller is a badge of project "web": its allowance is the bound. */
const ALLOWANCE = 400;
const signing = newSigningKey();
let badge: string;
const MAX_BODY = 2048;
const OPERATIONS = 240;
const SEED = Number(process.env.RPCSTACK_BILLING_SEED ?? 20261129);

/** The stub node: answers every call, counting each by the key its id names (`k<key>-<n>`). */
function startNode() {
  const counts = [0, 0, 0, 0, 0];
  const answer = (text: string) => {
    const body = JSON.parse(text);
    const calls = Array.isArray(body) ? body : [body];
    for (const c of calls) {
      const k = /^k(\d)-/.exec(String(c?.id))?.[1];
      if (k !== undefined) counts[Number(k)]++;
    }
    const out = calls.map((c) => ({ jsonrpc: "2.0", id: c?.id ?? null, result: "0x1" }));
    return JSON.stringify(Array.isArray(body) ? out : out[0]);
  };
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (d) => (text += d));
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      // The gateway's health check names no key; it is answered and not counted.
      res.end(text ? answer(text) : "{}");
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on("connection", (ws) => ws.on("message", (m) => ws.send(answer(String(m)))));
  return { counts, server };
}

let node: ReturnType<typeof startNode>;
let nodePort: number;
let gw: RunningGateway;
beforeAll(async () => {
  node = startNode();
  nodePort = await freePort();
  await new Promise<void>((r) => node.server.listen(nodePort, "127.0.0.1", r));
  gw = await startGateway(
    [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${nodePort}`, rpcWs: `ws://127.0.0.1:${nodePort}` } }],
    KEYS,
    // A badge service nobody asks: the badge is made here.
    { maxBatch: MAX_BATCH, maxBodyBytes: MAX_BODY, rateLimitPerSecond: 100_000, badges: { service: "127.0.0.1:9", projects: ["web"], perAddressPerMinute: 100_000 } },
    undefined,
    undefined,
    signing.publicKeyPem,
    QUOTAS,
  );
  badge = await makeBadge(signing, { sub: "web", chains: { eth: 1 }, alw: ALLOWANCE });
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await new Promise((r) => node?.server.close(r));
});


/** A raw WebSocket to the gateway: bytes written as given, the socket's end awaited. */
async function rawSocket(key: string, localAddress: string): Promise<{ socket: TLSSocket; closed: Promise<void> }> {
  const socket = tlsConnect({ host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", rejectUnauthorized: false, ALPNProtocols: ["http/1.1"], localAddress } as ConnectionOptions);
  await new Promise((r, j) => (socket.once("secureConnect", r), socket.once("error", j)));
  socket.on("error", () => {});
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  const head = await upgradeRaw(socket, `/gateway/eth/rpc/${key}`);
  if (!head.startsWith("HTTP/1.1 101")) socket.destroy();
  return { socket, closed };
}

const METHODS = ["eth_chainId", "eth_blockNumber", "eth_getBalance"];
const DENIED = ["admin_peers", "debug_setHead", "personal_sign"];

it(`per key, the node's calls equal usage's calls and the quota spent (seed ${SEED}, ${OPERATIONS} operations)`, async () => {
  const rnd = random(SEED);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const serial = [0, 0, 0, 0, 0];
  const call = (k: number, denied = false) => ({ jsonrpc: "2.0", id: `k${k}-${++serial[k]}`, method: denied ? pick(DENIED) : pick(METHODS), params: [] });
  /** A body: one call or a batch, some calls denied, now and then too large. */
  const body = (k: number) => {
    const r = rnd();
    if (r < 0.35) return call(k, rnd() < 0.2);
    if (r < 0.9) return Array.from({ length: 1 + Math.floor(rnd() * (MAX_BATCH + 2)) }, () => call(k, rnd() < 0.25));
    return { ...call(k), params: ["x".repeat(MAX_BODY)] };
  };
  const sessions = new Map<number, ClientHttp2Session>();
  const h2 = (k: number) => {
    if (!sessions.has(k) || sessions.get(k)!.destroyed) {
      const s = http2Connect(`https://localhost:${gw.httpsPort}`, { rejectUnauthorized: false });
      s.on("error", () => {});
      sessions.set(k, s);
    }
    return sessions.get(k)!;
  };
  const tally: Record<string, number> = {};
  const seen = (what: string) => (tally[what] = (tally[what] ?? 0) + 1);
  try {
    for (let op = 0; op < OPERATIONS; op++) {
      const k = Math.floor(rnd() * (KEYS.length + 1));
      const key = k < KEYS.length ? KEYS[k].key : badge;
      const r = rnd();
      if (r < 0.35) {
        // HTTP/1.1, now and then on a path no route takes.
        const unrouted = rnd() < 0.1;
        const res = await fetch(`${gw.base}/gateway/eth/rpc-http/${key}${unrouted ? "/more" : ""}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body(k)) });
        await res.arrayBuffer();
        seen(`h1 ${res.status}`);
      } else if (r < 0.6) {
        const stream = h2(k).request({ ":method": "POST", ":path": `/gateway/eth/rpc-http/${key}`, "content-type": "application/json" });
        stream.on("error", () => {});
        const status = await new Promise<number>((resolve) => {
          stream.once("response", (h) => resolve(Number(h[":status"])));
          stream.once("close", () => resolve(0));
          stream.end(JSON.stringify(body(k)));
        });
        stream.resume();
        seen(`h2 ${status}`);
      } else {
        // A WebSocket: several messages in one write, the last frame now and then split in two
        // writes; the answers (or the socket's end) awaited before it is closed.
        // From an address of its own: an address opens few WebSockets a second (gateway/limits.ts).
        const { socket, closed } = await rawSocket(key, `127.0.9.${10 + (op % 200)}`);
        if (socket.destroyed) {
          seen("ws refused");
          continue;
        }
        const messages = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => JSON.stringify(rnd() < 0.7 ? call(k, rnd() < 0.15) : Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => call(k, rnd() < 0.2))));
        const bytes = Buffer.concat(messages.map(textFrame));
        let received = 0;
        socket.on("data", (d: Buffer) => (received += d.length));
        if (rnd() < 0.3) {
          const cut = bytes.length - 3;
          socket.write(bytes.subarray(0, cut));
          await new Promise((res) => setTimeout(res, 20));
          socket.write(bytes.subarray(cut));
        } else socket.write(bytes);
        await Promise.race([closed, new Promise((res) => setTimeout(res, 400))]);
        seen(socket.destroyed || received === 0 ? "ws ended" : "ws answered");
        socket.destroy();
      }
    }
  } finally {
    for (const s of sessions.values()) s.destroy();
  }
  // What the gateway counted, per key: usage's calls over every interface, and the quota spent.
  const usage = await runtimeCommand(join(gw.dir, "admin.sock"), "show table st_usage");
  const quota = await runtimeCommand(join(gw.dir, "admin.sock"), "show table st_quota");
  const billed = KEYS.map(({ name }) => [...usage.matchAll(new RegExp(`key=${name}/\\S+ .* gpc0=(\\d+)`, "g"))].reduce((n, m) => n + Number(m[1]), 0));
  const spent = KEYS.map(({ name }) => Number(new RegExp(`key=${name}/\\S+ .* gpc0=(\\d+)`).exec(quota)?.[1] ?? NaN));
  console.log(`billing: ${JSON.stringify(tally)}; node ${JSON.stringify(node.counts)}, usage ${JSON.stringify(billed)}, quota ${JSON.stringify(spent)}`);
  // What the badge's allowance has left: single calls until it refuses.
  const relayedByBadge = node.counts[4];
  let left = 0;
  while ((await fetch(`${gw.base}/gateway/eth/rpc-http/${badge}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: `x-${left}`, method: "eth_chainId", params: [] }) })).status === 200) left++;
  console.log(`billing: the badge relayed ${relayedByBadge} calls and had ${left} of ${ALLOWANCE} left`);
  expect(ALLOWANCE - left).toBe(relayedByBadge);
  expect(relayedByBadge).toBeGreaterThan(20);
  expect(billed).toEqual(node.counts.slice(0, KEYS.length));
  expect([spent[0], spent[2]]).toEqual([node.counts[0], node.counts[2]]);
  // The quotas were run past (the last few calls may be left: a batch is refused whole).
  for (const [k, q] of [[0, QUOTAS[0].calls], [2, QUOTAS[1].calls]]) expect(node.counts[k]).toBeGreaterThan(q - MAX_BATCH - 2), expect(node.counts[k]).toBeLessThanOrEqual(q);
  expect(node.counts[1] + node.counts[3]).toBeGreaterThan(100);
}, 120_000);
