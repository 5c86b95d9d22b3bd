/** HTTP helpers shared by the gateway tests. */
import type { Server } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect as tlsConnect } from "node:tls";
import type { AddressInfo } from "node:net";
import type WebSocket from "ws";

/** An HTTPS request to a public hostname (SNI + Host) while connecting to loopback. */
export function hostRequest(httpsPort: number, host: string, path: string, method = "GET", body?: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: "127.0.0.1", port: httpsPort, servername: host, path, method, headers: { Host: host, "Content-Type": "application/json" } }, (res) => {
      let data = "";
      res.on("data", (d) => (data += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: data, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Probes until `ok`. A probe that throws is tried again like an answer that is not the one awaited:
 * HAProxy 3.2 closes the calls a node holds, with no answer, when it marks the node down.
 */
export async function eventually<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let last: string;
    try {
      const v = await probe();
      if (ok(v)) return v;
      last = JSON.stringify(v);
    } catch (e) {
      last = `failing (${(e as Error).message})`;
    }
    if (Date.now() > deadline) throw new Error(`${what}: still ${last}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Listens on a free loopback port and gives the server's base URL. */
export async function listenLoopback(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Sends one JSON-RPC request once the socket opens, resolves with the first reply (parsed) and closes the socket. */
export async function wsRoundTrip(ws: WebSocket, request: object): Promise<any> {
  try {
    return await new Promise<any>((resolve, reject) => {
      ws.on("error", reject);
      ws.on("open", () => ws.send(JSON.stringify(request)));
      ws.on("message", (d) => resolve(JSON.parse(String(d))));
    });
  } finally {
    ws.close();
  }
}

export interface RawAnswer {
  /** The status line's code, or 0 when the connection closed without an answer. */
  readonly status: number;
  readonly head: string;
  readonly body: string;
}

/** Whether `data` holds a whole response (Content-Length or chunked framing; HEAD answers have no body). */
function complete(data: string, head: boolean): boolean {
  const end = data.indexOf("\r\n\r\n");
  if (end < 0) return false;
  const headers = data.slice(0, end).toLowerCase();
  if (head || /^http\/1\.1 (1\d\d|204|304)/.test(headers)) return true;
  const length = /\r\ncontent-length: *(\d+)/.exec(headers);
  if (length) return Buffer.byteLength(data.slice(end + 4)) >= Number(length[1]);
  return /\r\ntransfer-encoding: *chunked/.test(headers) && data.endsWith("\r\n0\r\n\r\n");
}

/**
 * Writes `parts` over one TLS connection as they are (no client library to fix a path or a
 * header), `gapMs` apart, and resolves with the first answer once it is whole, or with what came
 * when the connection closes or `waitMs` after the last part.
 */
export function rawExchange(port: number, servername: string, parts: readonly (string | Buffer)[], opts: { gapMs?: number; waitMs?: number } = {}): Promise<RawAnswer> {
  const head = String(parts[0] ?? "").startsWith("HEAD ");
  return new Promise((resolve) => {
    let data = "";
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      s.destroy();
      const [h, ...rest] = data.split("\r\n\r\n");
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), head: h ?? "", body: rest.join("\r\n\r\n") });
    };
    const s = tlsConnect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false }, async () => {
      for (const [i, p] of parts.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, opts.gapMs ?? 0));
        if (!s.destroyed) s.write(p);
      }
      timer = setTimeout(done, opts.waitMs ?? 3000);
    });
    s.on("data", (d) => {
      data += d;
      if (complete(data, head)) done();
    });
    s.on("end", done);
    s.on("error", done);
  });
}
