/**
 * Quotas on the real HAProxy (gateway/quotas.ts): a key's calls per UTC day counted as usage
 * counts them (a batch by its calls, a WebSocket by its messages' calls), refused past the quota
 * with a JSON-RPC 429 naming it and its reset, before anything reaches the node; the RateLimit
 * headers on every answer; a badge counted against its project's quota; a quota changed live.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as http2Connect } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import { serverFrames, textFrame } from "./support/wsFrames.js";
import { keyMap, type ProjectKey } from "../gateway/build.js";
import { startKeeper } from "../usage/keeper.js";
import { ZERO } from "../usage/table.js";
import { eventually } from "./support/http.js";
import { makeBadge, newSigningKey } from "./support/badges.js";
import { hostHaproxy, startGateway, type HaproxyRunner, type RunningGateway } from "./support/haproxy.js";
import { runKeySync } from "./support/keySync.js";
import { freePort } from "./support/net.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const ALICE = "quota_Alice_Q4w8E2r6T0y3U7i1O5p9A4s8D2f";
const BOB = "quota_Bob_Z7x1C5v9B3n7M1q5W9e3R7t1Y5u9";
const CAROL = "quota_Carol_P3o7I1u5Y9t3R7e1W5q9L3k7J1";
const DAVE = "quota_Dave_M2n6B0v4C8x2Z6l0K4j8H2g6F0";
const ERIN = "quota_Erin_H5j9K3l7Z1x5C9v3B7n1M5q9W3e";
const FRANK = "quota_Frank_R8t2Y6u0I4o8P2a6S0d4F8g2H6j";
const GINA = "quota_Gina_T4y8U2i6O0p4A8s2D6f0G4h8J2k";
const HANK = "quota_Hank_W6e0R4t8Y2u6I0o4P8a2S6d0F4g";
/** A project key with the badge project's name: its back end, counted apart from the badges. */
const WEB = "quota_Web_B3n7M1q5W9e3R7t1Y5u9Z7x1C5v9";
const signing = newSigningKey();
const call = (id: number) => ({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] });
const post = (key: string, body: unknown) =>
  fetch(`${gw.base}/gateway/eth/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
/** Seconds to the next UTC midnight. */
const toMidnight = () => 86400 - (Math.floor(Date.now() / 1000) % 86400);
const nextMidnight = () => new Date((Math.floor(Date.now() / 86400000) + 1) * 86400000).toISOString().replace(".000Z", "Z");

const KEYS: ProjectKey[] = [{ name: "alice", key: ALICE }, { name: "bob", key: BOB }, { name: "carol", key: CAROL }, { name: "dave", key: DAVE }, { name: "erin", key: ERIN }, { name: "frank", key: FRANK }, { name: "gina", key: GINA }, { name: "hank", key: HANK }, { name: "web", key: WEB }];

let node: Recorder;
let gw: RunningGateway;
let adminPort: number;
beforeAll(async () => {
  node = await startRecorder();
  adminPort = await freePort();
  gw = await startGateway(
    [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } }],
    KEYS,
    // A badge service nobody asks: the badges are made here.
    { badges: { service: "127.0.0.1:9", projects: ["web"], perAddressPerMinute: 20 }, adminLoopbackPort: adminPort },
    undefined,
    undefined,
    signing.publicKeyPem,
    [{ name: "alice", calls: 5, per: "day" }, { name: "carol", calls: 3, per: "day" }, { name: "badge:web", calls: 3, per: "day" }, { name: "dave", calls: 100, per: "month" }],
  );
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await node?.stop();
});

it("lets a key's quota of calls through, a batch by its calls, then refuses with 429 and reaches no node", async () => {
  const seen = node.seen.length;
  const remaining: string[] = [];
  for (const body of [call(1), [call(2), call(3)], call(4), call(5)]) {
    const r = await post(ALICE, body);
    expect(r.status).toBe(200);
    expect(r.headers.get("ratelimit-limit")).toBe("5");
    expect(Math.abs(Number(r.headers.get("ratelimit-reset")) - toMidnight())).toBeLessThanOrEqual(2);
    remaining.push(r.headers.get("ratelimit-remaining")!);
  }
  expect(remaining).toEqual(["4", "2", "1", "0"]);
  const refused = await post(ALICE, call(6));
  expect(refused.status).toBe(429);
  expect(refused.headers.get("ratelimit-remaining")).toBe("0");
  expect(Math.abs(Number(refused.headers.get("retry-after")) - toMidnight())).toBeLessThanOrEqual(2);
  expect(await refused.json()).toEqual({
    jsonrpc: "2.0",
    id: null,
    error: { code: -32005, message: `quota exceeded: 5 calls per day for this project key; it resets at ${nextMidnight()}` },
  });
  expect(node.seen.length - seen).toBe(4);
}, 30_000);

it("leaves a key without a quota untouched: no RateLimit headers, no refusal", async () => {
  for (let i = 0; i < 8; i++) {
    const r = await post(BOB, call(i));
    expect(r.status).toBe(200);
    expect(r.headers.has("ratelimit-limit")).toBe(false);
  }
}, 30_000);

it("refuses a batch that would go past the quota without spending it, and a monthly quota resets at the month's end", async () => {
  expect((await post(CAROL, [call(1), call(2)])).status).toBe(200);
  const big = await post(CAROL, [call(3), call(4)]);
  expect(big.status).toBe(429);
  expect(big.headers.get("ratelimit-remaining")).toBe("1");
  expect((await post(CAROL, call(5))).headers.get("ratelimit-remaining")).toBe("0");
  const now = new Date();
  const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
  const r = await post(DAVE, call(1));
  expect(r.headers.get("ratelimit-limit")).toBe("100");
  expect(Math.abs(Number(r.headers.get("ratelimit-reset")) - (monthEnd - Math.floor(Date.now() / 1000)))).toBeLessThanOrEqual(2);
}, 30_000);

it("a request no route takes (405) gives back the quota it was counted against; a call the node answers spends it", async () => {
  const remaining = async (r: Response) => Number(r.headers.get("ratelimit-remaining"));
  const first = await remaining(await post(DAVE, call(1)));
  const unrouted = await fetch(`${gw.base}/gateway/eth/rpc-http/${DAVE}/more`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify([call(2), call(3)]) });
  expect(unrouted.status).toBe(405);
  expect(await remaining(await post(DAVE, call(4)))).toBe(first - 1);
}, 30_000);

it("counts a badge's calls against its project's quota (badge:web), apart from the project key of the same name", async () => {
  const badge = await makeBadge(signing, { sub: "web", chains: { eth: 1 }, alw: 100 });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await post(badge, call(i))).status);
  expect(statuses).toEqual([200, 200, 200, 429]);
  // Another badge of the same project shares the quota.
  expect((await post(await makeBadge(signing, { sub: "web", chains: { eth: 1 } }), call(9))).status).toBe(429);
  // The back end's key named web has no quota and a rate of its own: the badges spent neither.
  const backEnd = await post(WEB, call(10));
  expect(backEnd.status).toBe(200);
  expect(backEnd.headers.has("ratelimit-limit")).toBe(false);
  // A call the quota refused spent nothing of the badge's allowance (6): with the quota raised,
  // the badge makes its other 3 calls.
  const small = await makeBadge(signing, { sub: "web", chains: { eth: 1 }, alw: 6 });
  const map = join(gw.dir, "quotas.map");
  await runtimeCommand(join(gw.dir, "admin.sock"), `set map ${map} badge:web 6\\ day`);
  const more: number[] = [];
  for (let i = 0; i < 6; i++) more.push((await post(small, call(20 + i))).status);
  expect(more).toEqual([200, 200, 200, 429, 429, 429]);
  await runtimeCommand(join(gw.dir, "admin.sock"), `set map ${map} badge:web 1000\\ day`);
  const after: number[] = [];
  for (let i = 0; i < 4; i++) after.push((await post(small, call(30 + i))).status);
  expect(after).toEqual([200, 200, 200, 429]);
  expect(await (await post(small, call(40))).text()).toMatch(/badge allowance used up/);
}, 30_000);

it("closes a WebSocket before it forwards a message past the quota, and refuses its upgrade once none is left", async () => {
  const admin = (cmd: string) => runtimeCommand(join(gw.dir, "admin.sock"), cmd);
  const open = () => new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${BOB}`, { rejectUnauthorized: false });
  // A value of more than one word: the runtime API's command line takes `\ ` for a blank.
  await admin(`add map ${join(gw.dir, "quotas.map")} bob 3\\ day`);
  for (let i = 0; i < 3; i++) expect((await post(BOB, call(i))).status).toBe(200);
  const refused = open();
  const status = await new Promise<number>((resolve, reject) => (refused.once("unexpected-response", (_q, res) => resolve(res.statusCode ?? 0)), refused.once("open", () => reject(new Error("upgraded past the quota")))));
  expect(status).toBe(429);
  await admin(`set map ${join(gw.dir, "quotas.map")} bob 5\\ day`);
  const ws = open();
  let remaining: unknown;
  ws.once("upgrade", (res) => (remaining = res.headers["ratelimit-remaining"]));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  expect(remaining).toBe("2");
  const seen = node.wsMessages.length;
  const answers: unknown[] = [];
  ws.on("message", (m) => answers.push(JSON.parse(String(m))));
  const closed = new Promise((r) => ws.once("close", r));
  const first = new Promise((r) => ws.once("message", r));
  ws.send(JSON.stringify(call(1)));
  await first;
  ws.send(JSON.stringify([call(2), call(3)]));
  await closed;
  expect(answers).toHaveLength(1);
  expect(node.wsMessages.length - seen).toBe(1);
}, 30_000);

/** A WebSocket kept open: each `call` is answered, or the socket closes first (then "closed"). */
async function steadySocket(key: string) {
  const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${key}`, { rejectUnauthorized: false });
  let remaining: string | undefined;
  ws.once("upgrade", (res) => (remaining = res.headers["ratelimit-remaining"] as string | undefined));
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  let id = 0;
  return {
    remaining: () => remaining,
    call: () =>
      new Promise<string>((resolve) => {
        const mine = ++id;
        const onMessage = (m: unknown) => JSON.parse(String(m)).id === mine && (ws.off("message", onMessage), resolve("answered"));
        ws.on("message", onMessage);
        ws.once("close", () => resolve("closed"));
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(call(mine)));
        else resolve("closed");
      }),
    close: () => ws.terminate(),
  };
}

it("an open WebSocket follows its key's quota at its next message: lowered, raised, removed, and added where it had none", async () => {
  const map = join(gw.dir, "quotas.map");
  const admin = (cmd: string) => runtimeCommand(join(gw.dir, "admin.sock"), cmd);
  await admin(`add map ${map} erin 100\\ day`);
  const seen = node.wsMessages.length;
  const erin = await steadySocket(ERIN);
  try {
    expect([await erin.call(), await erin.call()]).toEqual(["answered", "answered"]);
    // Lowered to 3: one more goes on, the next would pass it.
    await admin(`set map ${map} erin 3\\ day`);
    expect(await erin.call()).toBe("answered");
    await admin(`set map ${map} erin 4\\ day`);
    expect(await erin.call()).toBe("answered");
    // Removed: no bound any more, and what goes on is still counted for a quota set again.
    await admin(`del map ${map} erin`);
    expect([await erin.call(), await erin.call()]).toEqual(["answered", "answered"]);
    await admin(`add map ${map} erin 6\\ day`);
    expect(await erin.call()).toBe("closed");
    expect(node.wsMessages.length - seen).toBe(6);
    expect((await post(ERIN, call(1))).status).toBe(429);
  } finally {
    erin.close();
  }
  // A key that had no quota when its socket opened: the message after a quota is set closes the
  // socket unforwarded (its period is tracked from a handshake), and the next socket counts in it.
  const frank = await steadySocket(FRANK);
  try {
    expect(await frank.call()).toBe("answered");
    await admin(`add map ${map} frank 10\\ day`);
    const before = node.wsMessages.length;
    expect(await frank.call()).toBe("closed");
    expect(node.wsMessages.length).toBe(before);
  } finally {
    frank.close();
  }
  const again = await steadySocket(FRANK);
  try {
    expect(again.remaining()).toBe("10");
    expect(await again.call()).toBe("answered");
    expect((await post(FRANK, call(1))).headers.get("ratelimit-remaining")).toBe("8");
  } finally {
    again.close();
  }
}, 30_000);

/** An open WebSocket read raw from here on: its socket, the bytes it received, and its end. */
async function rawWebSocket(key: string) {
  const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${key}`, { rejectUnauthorized: false });
  await new Promise((resolve, reject) => (ws.once("open", resolve), ws.once("error", reject)));
  const socket = (ws as unknown as { _socket: import("node:net").Socket })._socket;
  socket.removeAllListeners("data");
  const got: Buffer[] = [];
  socket.on("data", (d: Buffer) => got.push(d));
  return { socket, received: () => Buffer.concat(got), ended: new Promise((r) => socket.once("close", r)) };
}


describe("pipelined messages past the quota: those before it go on and are billed, the rest never", () => {
  const PIPELINED = 15;
  const QUOTA = 10;
  const frames = Buffer.concat(Array.from({ length: PIPELINED }, (_, i) => textFrame(JSON.stringify(call(i + 1)))));
  /** What the client got: answered ids, and the close frame's code and reason. */
  const verdict = (got: { op: number; payload: Buffer }[]) => ({
    answered: got.filter((f) => f.op === 1).map((f) => JSON.parse(String(f.payload)).id),
    close: got.filter((f) => f.op === 8).map((f) => `${f.payload.readUInt16BE(0)} ${f.payload.subarray(2)}`),
  });
  const expected = { answered: Array.from({ length: QUOTA }, (_, i) => i + 1), close: ["1008 quota exceeded for this project key"] };

  it("over HTTP/1.1: 15 messages in one write against a quota of 10", async () => {
    await runtimeCommand(join(gw.dir, "admin.sock"), `add map ${join(gw.dir, "quotas.map")} gina ${QUOTA}\\ day`);
    const seen = node.wsMessages.length;
    const { socket, received, ended } = await rawWebSocket(GINA);
    socket.write(frames);
    await eventually("the close frame", async () => verdict(serverFrames(received())).close.length, (n) => n === 1, 10_000);
    socket.end(textFrame("").fill(0x88, 0, 1));
    await Promise.race([ended, new Promise((r) => setTimeout(r, 3000))]);
    socket.destroy();
    expect(verdict(serverFrames(received()))).toEqual(expected);
    expect(node.wsMessages.length - seen).toBe(QUOTA);
    // The bill: the quota is spent by exactly what went on.
    expect((await post(GINA, call(99))).status).toBe(429);
  }, 30_000);

  it("over an HTTP/2 WebSocket (extended CONNECT): the same", async () => {
    await runtimeCommand(join(gw.dir, "admin.sock"), `add map ${join(gw.dir, "quotas.map")} hank ${QUOTA}\\ day`);
    const seen = node.wsMessages.length;
    const session = http2Connect(`https://localhost:${gw.httpsPort}`, { rejectUnauthorized: false });
    session.on("error", () => {});
    try {
      await new Promise((r) => session.once("remoteSettings", r));
      const stream = session.request({ ":method": "CONNECT", ":protocol": "websocket", ":scheme": "https", ":path": `/gateway/eth/rpc/${HANK}`, ":authority": `localhost:${gw.httpsPort}`, "sec-websocket-version": "13" } as Record<string, string>);
      stream.on("error", () => {});
      expect(await new Promise<number>((r) => stream.once("response", (h) => r(Number(h[":status"]))))).toBe(200);
      const got: Buffer[] = [];
      stream.on("data", (d: Buffer) => got.push(d));
      stream.write(frames);
      await eventually("the close frame", async () => verdict(serverFrames(Buffer.concat(got))).close.length, (n) => n === 1, 10_000);
      expect(verdict(serverFrames(Buffer.concat(got)))).toEqual(expected);
      expect(node.wsMessages.length - seen).toBe(QUOTA);
      expect((await post(HANK, call(99))).status).toBe(429);
    } finally {
      session.destroy();
    }
  }, 30_000);
});

it("a message the gateway cannot relay ends the socket after the whole messages before it in the same read, which are answered and billed", async () => {
  const seen = node.wsMessages.length;
  const { socket, received } = await rawWebSocket(WEB);
  socket.write(Buffer.concat([textFrame(JSON.stringify(call(1))), textFrame(JSON.stringify(call(2))), textFrame("not json")]));
  await eventually("the close frame", async () => serverFrames(received()).filter((f) => f.op === 8).length, (n) => n === 1, 10_000);
  socket.destroy();
  const frames = serverFrames(received());
  expect(frames.filter((f) => f.op === 1).map((f) => JSON.parse(String(f.payload)).id)).toEqual([1, 2]);
  expect(frames.filter((f) => f.op === 8).map((f) => `${f.payload.readUInt16BE(0)} ${f.payload.subarray(2)}`)).toEqual(["1008 message the gateway cannot read"]);
  expect(node.wsMessages.length - seen).toBe(2);
  expect(/key=web\/eth\/ws .* gpc0=(\d+)/.exec(await runtimeCommand(join(gw.dir, "admin.sock"), "show table st_usage"))?.[1]).toBe("2");
}, 30_000);

describe("a day turning under an open WebSocket", () => {
  // HAProxy's clock, from Debian's libfaketime: the day starts 6 s after it does (its timers keep
  // the real monotonic clock).
  const LIBFAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";
  const day = new Date().toISOString().slice(0, 10);
  const fakeClock: HaproxyRunner = {
    ...hostHaproxy,
    start: (cfg, env) => hostHaproxy.start(cfg, { ...env, LD_PRELOAD: LIBFAKETIME, FAKETIME: `@${day} 23:59:54`, FAKETIME_DONT_FAKE_MONOTONIC: "1", TZ: "UTC" }),
  };
  let late: RunningGateway;
  beforeAll(async () => {
    late = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url, rpcWs: node.wsUrl } }], KEYS, {}, undefined, fakeClock, undefined, [{ name: "erin", calls: 5, per: "day" }]);
  }, 60_000);
  afterAll(async () => {
    await late?.stop();
  });

  it("the first message after midnight closes the socket unforwarded; the next socket counts in the new day", async () => {
    const open = async () => {
      const ws = new WebSocket(`wss://localhost:${late.httpsPort}/gateway/eth/rpc/${ERIN}`, { rejectUnauthorized: false });
      const headers = await new Promise<Record<string, unknown>>((resolve, reject) => (ws.once("upgrade", (res) => resolve(res.headers)), ws.once("error", reject)));
      await new Promise((r) => (ws.readyState === WebSocket.OPEN ? r(null) : ws.once("open", r)));
      const answer = (id: number) =>
        new Promise<string>((resolve) => {
          ws.once("message", () => resolve("answered"));
          ws.once("close", () => resolve("closed"));
          ws.send(JSON.stringify(call(id)));
        });
      return { ws, headers, answer };
    };
    const before = await open();
    try {
      expect(before.headers["ratelimit-remaining"]).toBe("5");
      expect(Number(before.headers["ratelimit-reset"])).toBeLessThanOrEqual(6);
      expect([await before.answer(1), await before.answer(2)]).toEqual(["answered", "answered"]);
      await new Promise((r) => setTimeout(r, 6500));
      const seen = node.wsMessages.length;
      expect(await before.answer(3)).toBe("closed");
      expect(node.wsMessages.length).toBe(seen);
    } finally {
      before.ws.terminate();
    }
    const after = await open();
    try {
      expect(after.headers["ratelimit-remaining"]).toBe("5");
      expect(Number(after.headers["ratelimit-reset"])).toBeGreaterThan(86_000);
      expect(await after.answer(4)).toBe("answered");
    } finally {
      after.ws.terminate();
    }
  }, 30_000);
});

it("applies a quota changed live through the runtime API to the next call", async () => {
  const map = join(gw.dir, "quotas.map");
  expect((await post(ALICE, call(1))).status).toBe(429);
  await runtimeCommand(join(gw.dir, "admin.sock"), `set map ${map} alice 7\\ day`);
  const r = await post(ALICE, call(2));
  expect(r.status).toBe(200);
  expect(r.headers.get("ratelimit-limit")).toBe("7");
  expect(r.headers.get("ratelimit-remaining")).toBe("1");
  await runtimeCommand(join(gw.dir, "admin.sock"), `del map ${map} alice`);
  expect((await post(ALICE, call(3))).headers.has("ratelimit-limit")).toBe(false);
}, 30_000);

it("takes the deployed quotas from the key sync: the map file is the deployed one and applies to the next call", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-quotasync-"));
  try {
    writeFileSync(join(dir, "keys.map"), keyMap(KEYS));
    writeFileSync(join(dir, "quotas.map"), "carol 50 day\nbadge:web 9 month\n");
    const quotaMap = join(gw.dir, "quotas.map");
    const run = await runKeySync({ KEY_MAP: join(gw.dir, "keys.map"), DESIRED: join(dir, "keys.map"), QUOTA_MAP: quotaMap, DESIRED_QUOTAS: join(dir, "quotas.map"), ADMIN_PORT: String(adminPort) });
    expect(run).toEqual({ code: 0, out: "key sync: 9 keys live: alice,bob,carol,dave,erin,frank,gina,hank,web\nkey sync: 2 quotas live: carol 50 day,badge:web 9 month\n" });
    expect(readFileSync(quotaMap, "utf8")).toBe("carol 50 day\nbadge:web 9 month\n");
    const r = await post(CAROL, call(1));
    expect(r.status).toBe(200);
    expect(r.headers.get("ratelimit-limit")).toBe("50");
    const free = await post(DAVE, call(2));
    expect(free.headers.has("ratelimit-limit")).toBe(false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

it("counts what the usage ledger holds from before this HAProxy process: the keeper seeds it when it first reads a new process", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-quotaseed-"));
  const admin = join(gw.dir, "admin.sock");
  const remaining = async () => (await post(ALICE, call(1))).headers.get("ratelimit-remaining");
  try {
    await runtimeCommand(admin, `add map ${join(gw.dir, "quotas.map")} alice 1000\\ day`);
    const start = Number(await remaining());
    // The ledger's last reading came from another process: alice's 200 calls today were counted by it.
    const today = new Date().toISOString().slice(0, 10);
    const ledger = { version: 1, days: { [today]: { "alice/eth/http": { ...ZERO, calls: 200 } } }, last: { process: { pid: 1, startTimeSec: 1, cumReq: 0 }, entries: {} } };
    writeFileSync(join(dir, "usage.json"), JSON.stringify(ledger));
    const logs: string[] = [];
    const keeper = startKeeper({ admin, file: join(dir, "usage.json"), intervalMs: 60_000, listen: { host: "127.0.0.1", port: 0 }, log: (l) => logs.push(l), quotaUsedMap: join(gw.dir, "quota_used.map") });
    try {
      await keeper.ready;
      await eventually("the seed", async () => logs.join("\n"), (l) => /seeded/.test(l));
      expect(Number(await remaining())).toBe(start - 1 - 200);
    } finally {
      await keeper.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
