/** HTTP helpers shared by the gateway tests. */
import type { Server } from "node:http";
import { request as httpsRequest } from "node:https";
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

export async function eventually<T>(what: string, probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let v = await probe();
  while (!ok(v)) {
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
    v = await probe();
  }
  return v;
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
