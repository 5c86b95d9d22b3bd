/** JSON-RPC over HTTP for the readiness poller: every outcome becomes an RpcReply, never a throw. */
import type { RpcReply } from "./syncState.js";

let nextId = 1;

/** scheme://host[:port] only: an endpoint's credentials (user info, path keys, query) never reach a log. */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return "(unparseable URL)";
  }
}

/**
 * fetch refuses a URL with user info (`https://user:pass@host`, how some L1 providers hand out
 * access): send it as Basic authorization instead.
 */
function withCredentials(url: string): { href: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (!u.username && !u.password) return { href: url, headers: {} };
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64");
  u.username = "";
  u.password = "";
  return { href: u.href, headers: { Authorization: `Basic ${basic}` } };
}

function unreachable(url: string, e: unknown, timeoutMs: number): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  const why = err.name === "TimeoutError" ? `no answer within ${timeoutMs / 1000}s` : (err.cause?.code ?? err.cause?.message ?? err.message);
  return `${shownUrl(url)} unreachable (${why})`;
}

export async function rpcCall(url: string, method: string, params: unknown[] = [], timeoutMs = 10_000): Promise<RpcReply> {
  let res: Response;
  try {
    const target = withCredentials(url);
    res = await fetch(target.href, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...target.headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (e) {
    return { failure: unreachable(url, e, timeoutMs) };
  }
  const text = await res.text().catch(() => "");
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return { failure: `${shownUrl(url)} answered HTTP ${res.status} with a body that is not JSON` };
  }
  if (body && typeof body === "object" && body.error) {
    return { error: { code: body.error.code, message: String(body.error.message ?? "no message") } };
  }
  if (!res.ok) return { failure: `${shownUrl(url)} answered HTTP ${res.status}` };
  if (!body || typeof body !== "object" || !("result" in body)) return { failure: `${shownUrl(url)} answered without a JSON-RPC result` };
  return { result: body.result };
}

export const isUnreachable = (r: RpcReply) => "failure" in r && r.failure.includes("unreachable");

/** The HTTP status of a GET (a node's readiness endpoint), or why there was none. */
export async function httpStatus(url: string, timeoutMs = 10_000): Promise<{ status: number } | { failure: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status };
  } catch (e) {
    return { failure: unreachable(url, e, timeoutMs) };
  }
}
