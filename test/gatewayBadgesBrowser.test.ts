/**
 * A front end with a badge, end to end in a real browser: Debian's Chromium loads a page from an
 * allowed origin, the client library asks the stack's badge service (through the gateway) for a
 * badge and relays through Debian's HAProxy to a real EVM node (hardhat). The same page from
 * another origin gets nothing; no project key is ever in the page's traffic; a badge copied out of
 * the page stops working after its lifetime, covers only its chain, and cannot be altered.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { makeBadge, startBadgeService, type RunningBadgeService } from "./support/badges.js";
import { serveClientPage, startChromium, type Browser } from "./support/chromium.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { hardhatForTests } from "./support/hardhat.js";
import { freePort } from "./support/net.js";

const KEY = "backend_Key_Q2wE4rT6yU8iO0pA1sD3fG5h";
// Short, so that the test sees badges expire and be renewed.
const LIFETIME = 3;
const SKEW = 5;
const node = hardhatForTests();
let svc: RunningBadgeService;
let gw: RunningGateway;
let page: Awaited<ReturnType<typeof serveClientPage>>;
let allowed: string;
let other: string;
let browser: Browser;

beforeAll(async () => {
  // The page's port is known before the badge service is told its origin.
  const port = await freePort();
  allowed = `http://127.0.0.1:${port}`;
  other = `http://localhost:${port}`;
  svc = await startBadgeService([{ projectId: "dapp", chains: { ETH1: "eth" }, origins: [allowed], lifetimeSeconds: LIFETIME, allowance: 1000 }]);
  gw = await startGateway(
    [
      { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node().url, rpcWs: node().wsUrl } },
      { path: "eth2", chainId: "ETH2", kind: "evm", upstreams: { rpcHttp: node().url } },
    ],
    [{ name: "team", key: KEY }],
    { badges: { service: svc.address, projects: ["dapp"], perAddressPerMinute: 100 } },
    undefined,
    undefined,
    svc.key.publicKeyPem,
  );
  page = await serveClientPage(port);
  browser = await startChromium();
}, 120_000);

afterAll(async () => {
  await browser?.stop();
  page?.close();
  await gw?.stop();
  await svc?.stop();
});

const clientOf = `rpcstack.createClient({ baseUrl: GW, badge: { badgeServerAddress: GW + "/badge", projectId: "dapp" }, chainIds: "ETH1", chainPaths: { ETH1: "eth" }, retries: 0 })`;
const relay = (chain: string, key: string) =>
  fetch(`${gw.base}/gateway/${chain}/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });

it("a page of the allowed origin relays with badges over HTTP and WebSocket, and its traffic holds no project key", async () => {
  const out = await browser.evaluate(`${allowed}/`, `(async () => {
    const GW = ${JSON.stringify(gw.base)};
    const c = ${clientOf};
    const chainId = await c.sendRelay({ method: "eth_chainId", params: [] });
    const block = await c.sendRelay({ method: "eth_blockNumber", params: [] });
    const ws = await c.sendRelayWs({ method: "eth_chainId", params: [] });
    return { origin: location.origin, chainId, block, ws };
  })()`);
  expect(out).toMatchObject({ origin: allowed, chainId: "0x7a69", ws: "0x7a69" });
  expect(BigInt(out.block)).toBeGreaterThan(0n);
  const sent = browser.requests().filter((r) => r.url.startsWith(gw.base.replace("localhost", "")) || r.url.includes(`:${gw.httpsPort}/`));
  expect(sent.some((r) => /\/gateway\/eth\/rpc-http\/[\w-]+\.[\w-]+\.[\w-]+$/.test(r.url))).toBe(true);
  expect(JSON.stringify(browser.requests())).not.toContain(KEY);
}, 60_000);

it("the same page from another origin gets no badge, and so no relay: the client says the origin was refused, naming it", async () => {
  const out = await browser.evaluate(`${other}/`, `(async () => {
    const GW = ${JSON.stringify(gw.base)};
    try {
      await ${clientOf}.sendRelay({ method: "eth_chainId", params: [] });
      return { relayed: true };
    } catch (e) {
      return { relayed: false, kind: e.kind, message: e.message };
    }
  })()`);
  expect(out).toMatchObject({ relayed: false, kind: "badge" });
  // The page may read the refusal (it was "badge server unreachable" while CORS hid it): it names the origin.
  expect(out.message).toBe(`badge server refused: origin ${other} may not ask for badges of project dapp`);
  expect(svc.log.join("\n")).not.toContain(`origin=${other}`);
}, 60_000);

it("a subscription outlives its badges: before each expires the client subscribes on a new socket with a fresh one, then closes the old; every head arrives once", async () => {
  const out = await browser.evaluate(`${allowed}/`, `(async () => {
    const GW = ${JSON.stringify(gw.base)};
    const heads = [];
    const errors = [];
    const sub = await ${clientOf}.subscribe({ method: "eth_subscribe", params: ["newHeads"] }, (p) => heads.push({ at: Date.now(), n: parseInt(p.result.number, 16) }), (e) => errors.push(e.message));
    const start = Date.now();
    await new Promise((r) => setTimeout(r, ${(LIFETIME + SKEW) * 2 * 1000 + 2000}));
    sub.close();
    return { start, heads, errors };
  })()`);
  expect(out.errors).toEqual([]);
  const badgeSockets = new Set(browser.requests().filter((r) => r.url.startsWith("wss://") && r.url.includes("/gateway/eth/rpc/")).map((r) => r.url)).size;
  // A renewal every 80% of the badge's lifetime: at least three renewals in the run, each a socket with its own badge.
  expect(badgeSockets).toBeGreaterThanOrEqual(4);
  // Against the node's own blocks: every head from the first to the last, none missing, none twice.
  const numbers = out.heads.map((h: { n: number }) => h.n);
  const [first, last] = [numbers[0], numbers.at(-1)];
  expect(numbers, `heads ${numbers}`).toEqual(Array.from({ length: last - first + 1 }, (_, i) => first + i));
  // Heads kept coming to the caller after the first badge had expired.
  const firstExpiry = out.start + (LIFETIME + SKEW) * 1000;
  expect(out.heads.filter((h: { at: number }) => h.at > firstExpiry + 3000).length).toBeGreaterThan(2);
}, 60_000);

it("a badge copied out of the page: it covers only its chain, cannot be altered, and stops working after its lifetime", async () => {
  const res = await fetch(`${gw.base}/badge`, { method: "POST", headers: { Origin: allowed, "Content-Type": "application/json" }, body: JSON.stringify({ projectId: "dapp", chainIds: ["ETH1"] }) });
  const { key: badge } = (await res.json()) as { key: string };
  expect((await relay("eth", badge)).status).toBe(200);
  expect((await relay("eth2", badge)).status).toBe(403);
  const [h, p, s] = badge.split(".");
  const wider = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, "base64url").toString()), chains: { eth: 1, eth2: 1 } })).toString("base64url");
  expect((await relay("eth2", `${h}.${wider}.${s}`)).status).toBe(401);
  await new Promise((r) => setTimeout(r, (LIFETIME + SKEW + 1) * 1000));
  const late = await relay("eth", badge);
  expect(late.status).toBe(401);
  expect(((await late.json()) as any).error.message).toMatch(/badge expired/);
  // A fresh one made with the same key works: only time ended the copy.
  expect((await relay("eth", await makeBadge(svc.key, { sub: "dapp" }))).status).toBe(200);
}, 60_000);
