/**
 * A browser is the client: headless Chromium loads a page from one loopback origin, and the
 * client library, bundled for the browser, calls the real gateway on another (CORS).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { serveClientPage, startChromium, type Browser } from "./support/chromium.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "web_Key_M3nB6vC9xZ2lK5jH8gF1dS4aP7oI";

let up: Recorder;
let gw: RunningGateway;
let page: Awaited<ReturnType<typeof serveClientPage>>;
let pageUrl: string;
let browser: Browser;

beforeAll(async () => {
  up = await startRecorder();
  gw = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url } }], [{ name: "web", key: KEY }]);
  page = await serveClientPage();
  pageUrl = page.url;
  browser = await startChromium();
}, 90_000);

afterAll(async () => {
  await browser?.stop();
  page?.close();
  await gw?.stop();
  await up?.stop();
});

it("Chromium on another origin relays through the gateway with the client library; a wrong key is the library's 401", async () => {
  const out = await browser.evaluate(pageUrl, `(async () => {
    const opts = { baseUrl: ${JSON.stringify(gw.base)}, chainIds: "ETH1", chainPaths: { ETH1: "eth" }, retries: 0 };
    const ok = await rpcstack.createClient({ ...opts, privateKey: ${JSON.stringify(KEY)} }).sendRelay({ method: "eth_chainId", params: [] });
    let err;
    try {
      await rpcstack.createClient({ ...opts, privateKey: "wrong_" + ${JSON.stringify(KEY)} }).sendRelay({ method: "eth_chainId", params: [] });
    } catch (e) {
      err = { kind: e.kind, status: e.status, code: e.code, message: e.message };
    }
    return { origin: location.origin, ok, err };
  })()`);
  expect(out.origin).toBe(pageUrl.slice(0, -1));
  expect(out.ok).toBe("0x1");
  expect(out.err).toMatchObject({ kind: "http", status: 401, code: -32001 });
  expect(out.err.message).toMatch(/invalid or missing project key/);
  // The preflights were answered by the gateway: the node saw the one relayed call only.
  expect(up.seen.map((s) => `${s.method} ${JSON.parse(s.body).method}`)).toEqual(["POST eth_chainId"]);
}, 60_000);
