/** HTTP helpers shared by the gateway tests. */
import { request as httpsRequest } from "node:https";

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
