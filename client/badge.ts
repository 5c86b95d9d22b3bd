/**
 * Badge mode, for front ends that must not hold a project key: a badge server hands out
 * short-lived keys. Contract (what a badge server implements):
 *
 *   POST <badgeServerAddress>
 *   Content-Type: application/json
 *   { "projectId": "<id>", "chainIds": ["STRK", ...] }
 *
 *   200 { "key": "<badge>", "expiresAt": "<ISO 8601 time>", "expiresIn": <seconds> }   (either will do)
 *   any other status: refused; the body's "error" (string) says why.
 *
 * The client renews the key when 80% of its lifetime has passed (or 30 s before expiry,
 * whichever comes first), and once more when the gateway answers 401 (over WebSocket, where a
 * browser does not tell the status, when a handshake fails or a badge's socket is closed).
 * expiresIn is preferred: it does not depend on the browser's clock agreeing with the server's.
 */
import { RelayError } from "./errors.js";

export interface BadgeOptions {
  readonly badgeServerAddress: string;
  readonly projectId: string;
}

export class BadgeKeys {
  private key?: string;
  private renewAt = 0;
  private pending?: Promise<string>;
  /** How many keys were fetched (for diagnostics). */
  fetches = 0;

  constructor(
    private readonly opts: BadgeOptions,
    private readonly chainIds: readonly string[],
    private readonly fetchImpl: typeof fetch,
    private readonly timeoutMs: number,
  ) {}

  async get(): Promise<string> {
    if (this.key && Date.now() < this.renewAt) return this.key;
    this.pending ??= this.fetchKey().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Milliseconds until the key is due for renewal (0 when none is held). */
  renewsIn(): number {
    return this.key ? Math.max(0, this.renewAt - Date.now()) : 0;
  }

  /** Drop the cached key (the gateway refused it). */
  invalidate() {
    this.key = undefined;
  }

  private async fetchKey(): Promise<string> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.opts.badgeServerAddress, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ projectId: this.opts.projectId, chainIds: this.chainIds }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      throw new RelayError("badge", `badge server ${this.opts.badgeServerAddress} unreachable: ${(e as Error).message}`);
    }
    const body = (await res.json().catch(() => ({}))) as { key?: unknown; expiresAt?: unknown; expiresIn?: unknown; error?: unknown };
    if (!res.ok || typeof body.key !== "string") {
      throw new RelayError("badge", `badge server refused: ${typeof body.error === "string" ? body.error : `HTTP ${res.status}`}`, { status: res.status });
    }
    const now = Date.now();
    const expires =
      typeof body.expiresIn === "number" ? now + body.expiresIn * 1000 : typeof body.expiresAt === "string" ? Date.parse(body.expiresAt) : NaN;
    if (!Number.isFinite(expires) || expires <= now) throw new RelayError("badge", "badge server returned a key without a future expiresAt/expiresIn");
    const lifetime = expires - now;
    this.key = body.key;
    const latest = lifetime - 30_000;
    this.renewAt = now + (latest > 0 ? Math.min(lifetime * 0.8, latest) : lifetime * 0.8);
    this.fetches++;
    return body.key;
  }
}
