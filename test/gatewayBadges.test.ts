/**
 * Badges on Debian's real HAProxy with the generated configuration: the badge service behind
 * /badge, badges checked by the gateway itself (signature, expiry, project, chain, allowance),
 * over HTTP and WebSocket. Nothing refused reaches the node.
 */
import { request } from "node:https";
import { SignJWT } from "jose";
import WebSocket, { WebSocketServer } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BADGE_ALG, BADGE_CLOCK_SKEW_SECONDS } from "../gateway/badgeContract.js";
import { startBadgeService, makeBadge, newSigningKey, type RunningBadgeService } from "./support/badges.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually, listenLoopback } from "./support/http.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "team_Key_Z8xC5vB2nM7qW4eR1tY6uI3oP0aS";
const ORIGIN = "https://app.example.org";
const PROJECT = { projectId: "web", chains: { ETH1: "eth", HEADS: "heads" }, origins: [ORIGIN], lifetimeSeconds: 60, allowance: 5 };
// A project with a rate of its own: 2 calls a second, 20 in the gateway's 10 s window.
const BURST = { projectId: "burst", chains: { ETH1: "eth" }, origins: [ORIGIN], lifetimeSeconds: 60, allowance: 100 };
const BURST_PER_WINDOW = 20;

let up: Recorder;
let svc: RunningBadgeService;
let gw: RunningGateway;
// A node that pushes a notification every 300 ms to every socket: what a subscription receives.
let heads: WebSocketServer;
let headsServer: import("node:http").Server;
beforeAll(async () => {
  up = await startRecorder();
  headsServer = (await import("node:http")).createServer();
  heads = new WebSocketServer({ server: headsServer });
  heads.on("connection", (ws) => {
    const t = setInterval(() => ws.send(JSON.stringify({ jsonrpc: "2.0", method: "eth_subscription", params: { subscription: "0x1", result: {} } })), 300);
    ws.on("close", () => clearInterval(t));
  });
  const headsUrl = (await listenLoopback(headsServer)).replace("http", "ws");
  svc = await startBadgeService([PROJECT, BURST]);
  gw = await startGateway(
    [
      { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url, rpcWs: up.wsUrl } },
      { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: up.url } },
      { path: "heads", chainId: "HEADS", kind: "evm", upstreams: { rpcHttp: up.url, rpcWs: headsUrl } },
    ],
    [{ name: "team", key: KEY }],
    { badges: { service: svc.address, projects: ["web", "burst"], perAddressPerMinute: 40, ratePerSecond: { burst: 2 } }, wsMaxConnectionsPerKey: 1 },
    undefined,
    undefined,
    svc.key.publicKeyPem,
  );
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  await svc?.stop();
  await up?.stop();
  heads?.clients.forEach((c) => c.terminate());
  headsServer?.close();
});

/** POST /badge with exactly these headers (fetch would not send any Origin we like). */
function askBadge(body: unknown, origin: string | null = ORIGIN): Promise<{ status: number; headers: Record<string, unknown>; json(): Promise<any> }> {
  return new Promise((resolve, reject) => {
    const r = request(
      { host: "127.0.0.1", port: gw.httpsPort, servername: "localhost", path: "/badge", method: "POST", headers: { "Content-Type": "application/json", ...(origin ? { Origin: origin } : {}) } },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, json: async () => JSON.parse(text) }));
      },
    );
    r.on("error", reject);
    r.end(JSON.stringify(body));
  });
}
const relay = (chain: string, key: string, body: unknown = { jsonrpc: "2.0", id: 7, method: "eth_chainId", params: [] }) =>
  fetch(`${gw.base}/gateway/${chain}/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

async function newBadge(projectId = "web"): Promise<string> {
  const res = await askBadge({ projectId, chainIds: ["ETH1"] });
  expect(res.status).toBe(200);
  return ((await res.json()) as { key: string }).key;
}

describe("the badge service behind /badge", () => {
  it("a page of an allowed origin gets a badge with its lifetime; any page may read the answer, and another origin's is a refusal naming it", async () => {
    const res = await askBadge({ projectId: "web", chainIds: ["ETH1"] });
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe(ORIGIN);
    const body = (await res.json()) as { key: string; expiresAt: string; expiresIn: number };
    expect(body.key.split(".")).toHaveLength(3);
    expect(body.expiresIn).toBe(60);
    expect(Math.abs(Date.parse(body.expiresAt) - Date.now() - 60_000)).toBeLessThan(5_000);
    // Never logged, by the service or the gateway.
    expect(svc.log.join("\n")).not.toContain(body.key);
    const pre = await fetch(`${gw.base}/badge`, { method: "OPTIONS", headers: { Origin: ORIGIN, "Access-Control-Request-Method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const other = await fetch(`${gw.base}/badge`, { method: "OPTIONS", headers: { Origin: "https://evil.example.net", "Access-Control-Request-Method": "POST" } });
    expect(other.headers.get("access-control-allow-origin")).toBe("https://evil.example.net");
    const refused = await fetch(`${gw.base}/badge`, { method: "POST", headers: { Origin: "https://evil.example.net", "Content-Type": "application/json" }, body: JSON.stringify({ projectId: "web", chainIds: ["ETH1"] }) });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("access-control-allow-origin")).toBe("https://evil.example.net");
    expect(await refused.json()).toEqual({ error: "origin https://evil.example.net may not ask for badges of project web" });
  });

  it("refuses, saying why: another origin, no origin, an unknown project, a chain outside the project", async () => {
    const cases: [unknown, string | null, number, RegExp][] = [
      [{ projectId: "web", chainIds: ["ETH1"] }, "https://evil.example.net", 403, /origin https:\/\/evil.example.net may not ask for badges of project web/],
      [{ projectId: "web", chainIds: ["ETH1"] }, null, 403, /no Origin header/],
      [{ projectId: "nope", chainIds: ["ETH1"] }, ORIGIN, 404, /unknown project "nope"/],
      [{ projectId: "web", chainIds: ["STRK"] }, ORIGIN, 403, /chain STRK is outside project web's scope \(ETH1, HEADS\)/],
      [{ projectId: "web" }, ORIGIN, 400, /chainIds must list/],
    ];
    for (const [body, origin, status, why] of cases) {
      const res = await askBadge(body, origin);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as { error: string }).error).toMatch(why);
    }
    const get = await fetch(`${gw.base}/badge`);
    expect(get.status).toBe(405);
  });
});

describe("badges at the gateway", () => {
  it("a badge relays like a project key, counted under badge:<its project>; the node never sees the badge", async () => {
    const badge = await newBadge();
    const before = up.seen.length;
    const res = await relay("eth", badge);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: unknown }).result).toBeDefined();
    expect(up.seen.length).toBe(before + 1);
    expect(JSON.stringify(up.seen.at(-1))).not.toContain(badge);
    await eventually("the access log line", async () => gw.logs(), (l) => /key=badge:web chain=eth iface=rpc-http/.test(l));
    expect(gw.logs()).not.toContain(badge);
    // The project keys still work beside badges.
    expect((await relay("eth", KEY)).status).toBe(200);
  });

  it("refuses a badge for another chain (403), a tampered, unsigned, foreign-key, expired or unlisted badge (401), and none reaches the node", async () => {
    const badge = await newBadge();
    // Verified once: the gateway remembers it, and must still refuse every altered copy.
    expect((await relay("eth", badge)).status).toBe(200);
    const before = up.seen.length;
    const scope = await relay("strk", badge, { jsonrpc: "2.0", id: 1, method: "starknet_chainId", params: [] });
    expect(scope.status).toBe(403);
    expect(((await scope.json()) as any).error.message).toBe("badge of project web does not cover chain strk");

    const [h, p, s] = badge.split(".");
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, chains: { eth: 1, strk: 1 } })).toString("base64url")}.${s}`;
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${p}.`;
    const foreign = await makeBadge(newSigningKey(), {});
    const now = Math.floor(Date.now() / 1000);
    const expired = await makeBadge(svc.key, { iat: now - 120, exp: now - 60 });
    const unlisted = await makeBadge(svc.key, { sub: "ghost" });
    const expect401 = async (key: string, why: RegExp) => {
      const res = await relay(key === tampered ? "strk" : "eth", key);
      expect(res.status).toBe(401);
      expect(((await res.json()) as any).error.message).toMatch(why);
    };
    await expect401(tampered, /badge signature invalid/);
    await expect401(unsigned, /badge signature invalid/);
    await expect401(foreign, /badge signature invalid/);
    await expect401(expired, /badge expired/);
    await expect401(unlisted, /no longer serves/);
    expect(up.seen.length).toBe(before);
  });

  it("reads the claims the service signs under the contract's names: one named otherwise is refused; an expiry is granted the skew, no more", async () => {
    const issued = JSON.parse(Buffer.from((await newBadge()).split(".")[1], "base64url").toString());
    // The service's badge, each claim the gateway reads in turn moved to another name, signed again.
    const renamed = (claim: string) => {
      const { [claim]: value, ...rest } = issued;
      return new SignJWT({ ...rest, [`x_${claim}`]: value, jti: `${issued.jti}-${claim}` }).setProtectedHeader({ alg: BADGE_ALG, typ: "JWT" }).sign(svc.key.privateKey);
    };
    const before = up.seen.length;
    for (const [claim, status] of [["sub", 401], ["exp", 401], ["chains", 403], ["alw", 429]] as const) {
      expect({ claim, status: (await relay("eth", await renamed(claim))).status }).toEqual({ claim, status });
    }
    expect(up.seen.length).toBe(before);
    const now = Math.floor(Date.now() / 1000);
    // Whole seconds on both clocks: 2 s either side of the skew's edge.
    expect((await relay("eth", await makeBadge(svc.key, { iat: now - 60, exp: now - BADGE_CLOCK_SKEW_SECONDS + 2 }))).status).toBe(200);
    const late = await relay("eth", await makeBadge(svc.key, { iat: now - 60, exp: now - BADGE_CLOCK_SKEW_SECONDS - 2 }));
    expect(late.status).toBe(401);
    expect(((await late.json()) as any).error.message).toMatch(/badge expired/);
  });

  it("counts calls against the badge's allowance, a batch call by call: past it 429, nothing more reaches the node", async () => {
    const badge = await newBadge();
    const before = up.seen.length;
    const batch = [1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, method: "eth_blockNumber", params: [] }));
    expect((await relay("eth", badge, batch)).status).toBe(200);
    expect((await relay("eth", badge)).status).toBe(200);
    expect((await relay("eth", badge)).status).toBe(200);
    const over = await relay("eth", badge);
    expect(over.status).toBe(429);
    expect(((await over.json()) as any).error.message).toMatch(/badge allowance used up/);
    expect(up.seen.length).toBe(before + 3);
    // Another badge of the same project has its own allowance.
    expect((await relay("eth", await newBadge())).status).toBe(200);
  });

  it("a request no route takes (405) gives back what it was counted against the allowance; a batch of denied calls spends none", async () => {
    const badge = await newBadge();
    const unrouted = await fetch(`${gw.base}/gateway/eth/rpc-http/${badge}/more`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, method: "eth_chainId", params: [] }))) });
    expect(unrouted.status).toBe(405);
    expect((await relay("eth", badge, [1, 2].map((id) => ({ jsonrpc: "2.0", id, method: "admin_peers", params: [] })))).status).toBe(200);
    // The allowance (5) is whole: five calls go on, the sixth is refused.
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await relay("eth", badge)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it("over WebSocket: a badge opens the socket, its messages spend the allowance, and the socket closes past it", async () => {
    const badge = await newBadge();
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${badge}?secret=null`);
    await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
    const replies: unknown[] = [];
    ws.on("message", (d) => replies.push(JSON.parse(String(d))));
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    // The handshake is no call: five messages fit (the allowance), the sixth does not, and the
    // client is told why.
    for (let id = 1; id <= 6; id++) {
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: "eth_blockNumber", params: [] }));
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(await closed).toBe(1008);
    expect(replies).toHaveLength(5);
    // The spent badge is refused at the next handshake too.
    const again = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${badge}?secret=null`);
    const status = await new Promise<number>((r) => again.once("unexpected-response", (_req, res) => r(res.statusCode!)));
    expect(status).toBe(429);
  });

  it("WebSocket connections count per badge, not per project: each page of a front end holds its own", async () => {
    const [a, b] = [await newBadge(), await newBadge()];
    const open = (badge: string) => new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${badge}?secret=null`);
    const first = open(a);
    await new Promise((r, j) => (first.once("open", r), first.once("error", j)));
    // wsMaxConnectionsPerKey is 1 here: the same badge cannot open a second socket, another badge of the project can.
    const again = open(a);
    expect(await new Promise<number>((r) => again.once("unexpected-response", (_q, res) => r(res.statusCode!)))).toBe(429);
    const other = open(b);
    await new Promise((r, j) => (other.once("open", r), other.once("error", j)));
    first.close();
    other.close();
  });

  it("a project with a rate of its own: its badges together get that rate (HTTP and an open socket), and neither the key nor another project's badges are held back", async () => {
    const [a, b] = [await newBadge("burst"), await newBadge("burst")];
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${a}?secret=null`);
    await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
    const replies: unknown[] = [];
    ws.on("message", (d) => replies.push(JSON.parse(String(d))));
    const closed = new Promise<[number, string]>((r) => ws.once("close", (c, why) => r([c, String(why)])));
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }));
    await eventually("the socket's answer", async () => replies.length, (n) => n === 1);
    // The handshake and the message took 2 of the window's 20; two badges of the project share the rest.
    const before = up.seen.length;
    const statuses: number[] = [];
    for (let i = 0; i < BURST_PER_WINDOW - 1; i++) statuses.push((await relay("eth", i % 2 ? a : b)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(BURST_PER_WINDOW - 2);
    const over = await relay("eth", b);
    expect(over.status).toBe(429);
    expect(((await over.json()) as any).error.message).toMatch(/rate limit exceeded/);
    // The project key and the other project's badges have the gateway's rate, untouched.
    expect((await relay("eth", KEY)).status).toBe(200);
    expect((await relay("eth", await newBadge())).status).toBe(200);
    // The open socket's next message is past the project's rate: the socket ends, nothing reaches the node.
    const relayed = up.seen.length;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "eth_blockNumber", params: [] }));
    expect(await closed).toEqual([1008, "rate limit exceeded for this project key"]);
    expect(up.seen.length - before).toBe(BURST_PER_WINDOW - 2 + 2); // the project's 18, the key's and the web badge's
    expect(up.seen.length).toBe(relayed);
    expect(replies).toHaveLength(1);
  });

  it("over WebSocket: a socket that only listens is closed once its badge has expired, though the node keeps sending", async () => {
    const now = Math.floor(Date.now() / 1000);
    const badge = await makeBadge(svc.key, { chains: { heads: 1 }, exp: now + 2 });
    const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/heads/rpc/${badge}?secret=null`);
    let notes = 0;
    ws.on("message", () => notes++);
    await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
    const [code, reason] = await new Promise<[number, string]>((r) => ws.once("close", (c, why) => r([c, String(why)])));
    const closedAt = Date.now() / 1000;
    expect([code, reason]).toEqual([1008, "badge expired"]);
    // Past exp and the 5 s skew, and not long after: the node's next frame ends it.
    expect(closedAt).toBeGreaterThan(now + 2 + 5);
    expect(closedAt).toBeLessThan(now + 2 + 5 + 3);
    expect(notes).toBeGreaterThan(5);
  }, 30_000);
});
