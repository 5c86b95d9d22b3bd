/** The client library against the gateway container, trusting the gateway's own certificate. */
import { request } from "node:https";
import { WebSocket } from "ws";
import { createClient, type RpcClient } from "../../client/index.js";

// fetch over node:https trusting the gateway's own certificate (Node 20's fetch cannot be given a CA).
/**
 * fetch that trusts `ca` (the gateway's first, self-signed certificate) and sends exactly the
 * headers given, each request on a connection of its own: Node's global agent keeps connections
 * alive, and one the gateway closed while idle fails the next request with "socket hang up".
 */
export const tlsFetch = (ca: string) => (url: string | URL, init: RequestInit = {}) =>
  new Promise<Response>((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers as Record<string, string>, ca, agent: false, signal: init.signal ?? undefined }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: Object.entries(res.headers).map(([k, v]): [string, string] => [k, String(v)]) })));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(init.body as string | undefined);
  });

export function gatewayClient(gw: { readonly url: string; readonly ca: string }, chainIds: string, privateKey: string, retries: number): RpcClient {
  const ca = gw.ca;
  return createClient({
    baseUrl: gw.url,
    privateKey,
    chainIds,
    retries,
    timeoutMs: 10_000,
    fetch: tlsFetch(ca) as typeof fetch,
    WebSocket: class extends WebSocket {
      constructor(url: string) {
        super(url, { ca });
      }
    } as any,
  });
}

/** Milliseconds until `probe` gives `want`, asked every 500 ms; throws after `boundMs`. */
export async function msUntil<T>(probe: () => Promise<T>, want: T, boundMs: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < boundMs) {
    if ((await probe()) === want) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`no ${String(want)} within ${boundMs} ms`);
}

/** The HTTP status a WebSocket upgrade to `url` gets from the gateway (101 when it opens). */
export function upgradeStatus(url: string, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ca });
    ws.on("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on("open", () => {
      resolve(101);
      ws.close();
    });
    ws.on("error", reject);
  });
}
