/**
 * Debian's headless Chromium driven over the DevTools protocol (with `ws`; no browser
 * download): open a page, evaluate an async expression in it, return its JSON value.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import { build } from "esbuild";
import WebSocket from "ws";
import { freePort, start, waitFor, type Child } from "./net.js";

export interface Browser {
  /** Opens `url` in the browser's page and evaluates `expression` (a promise) there. */
  evaluate(url: string, expression: string): Promise<any>;
  /** Every request the page sent since the browser started (DevTools' Network log: WebSockets as they are created): URL, headers and body. */
  requests(): readonly { url: string; headers: Record<string, string>; postData?: string }[];
  stop(): Promise<void>;
}

export async function startChromium(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "rpcstack-chromium-"));
  const port = await freePort();
  const child: Child = start("chromium", [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`, `--remote-debugging-port=${port}`,
    "--remote-debugging-address=127.0.0.1",
    // The gateway's test certificate comes from the tests' own CA, which the browser does not know.
    "--ignore-certificate-errors", "about:blank",
  ]);
  const stop = async () => {
    await child.stop();
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    const wsUrl = await waitFor("chromium DevTools", async () => {
      const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { type: string; webSocketDebuggerUrl: string }[];
      return list.find((t) => t.type === "page")?.webSocketDebuggerUrl;
    }, 30_000);
    const ws = new WebSocket(wsUrl);
    await new Promise((r, j) => (ws.once("open", r), ws.once("error", j)));
    let id = 0;
    const pending = new Map<number, (m: any) => void>();
    const events: ((m: any) => void)[] = [];
    ws.on("message", (d) => {
      const m = JSON.parse(String(d));
      if (m.id && pending.has(m.id)) pending.get(m.id)!(m);
      else events.forEach((e) => e(m));
    });
    const send = (method: string, params: object = {}) => new Promise<any>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
    await send("Page.enable");
    const sent: { url: string; headers: Record<string, string>; postData?: string }[] = [];
    events.push((m) => {
      if (m.method === "Network.requestWillBeSent") sent.push({ url: m.params.request.url, headers: m.params.request.headers, postData: m.params.request.postData });
      if (m.method === "Network.webSocketWillSendHandshakeRequest") sent.push({ url: m.params.request.url ?? "", headers: m.params.request.headers });
      if (m.method === "Network.webSocketCreated") sent.push({ url: m.params.url, headers: {} });
    });
    await send("Network.enable");
    return {
      async evaluate(url, expression) {
        const loaded = new Promise<void>((r) => events.push((m) => m.method === "Page.loadEventFired" && r()));
        await send("Page.navigate", { url });
        await loaded;
        const res = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true });
        if (res.result?.exceptionDetails) throw new Error(JSON.stringify(res.result.exceptionDetails));
        return res.result?.result?.value;
      },
      requests: () => sent,
      stop: async () => {
        ws.close();
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw new Error(`${(e as Error).message}\n${child.output().slice(-2000)}`);
  }
}

/**
 * A page with the client library bundled for the browser (global `rpcstack`), served on loopback
 * at `port` (0: any free one): what the browser tests open, from an origin of their choosing.
 */
export async function serveClientPage(port = 0): Promise<{ readonly url: string; close(): void }> {
  const bundle = await build({ entryPoints: ["client/index.ts"], bundle: true, format: "iife", globalName: "rpcstack", platform: "browser", target: "es2020", write: false });
  const html = `<!doctype html><html><head><meta charset="utf-8"><script>${bundle.outputFiles[0].text}</script></head><body>page</body></html>`;
  const server = createServer((_req, res) => (res.writeHead(200, { "Content-Type": "text/html" }), res.end(html)));
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, close: () => server.close() };
}
