/**
 * The badge service: POST /badge issues a badge to a page of an allowed origin; CORS lets any
 * page read the answer (a refusal names the origin); GET /health answers 200. Logs one line per answer, never a badge.
 * It sits behind the gateway, which bounds the rate and size of what reaches it.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { BADGE_MAX_BODY_BYTES, BADGE_PATH } from "../gateway/badgeContract.js";
import { decide, type ServiceProject } from "./issue.js";
import { signBadge, type SigningKey } from "./token.js";

// The gateway refuses larger ones first when they say their length; a chunked one is cut here.
const MAX_BODY = BADGE_MAX_BODY_BYTES;

export interface BadgeServerOptions {
  readonly projects: readonly ServiceProject[];
  readonly key: SigningKey;
  /** Where answers are logged (one line each). */
  readonly log?: (line: string) => void;
  /** Seconds since the epoch (tests move it). */
  readonly now?: () => number;
}

export function createBadgeServer(o: BadgeServerOptions): Server {
  const byId = new Map(o.projects.map((p) => [p.projectId, p]));
  const now = o.now ?? (() => Math.floor(Date.now() / 1000));
  const log = o.log ?? ((l: string) => console.log(l));

  return createServer(async (req, res) => {
    const origin = typeof req.headers.origin === "string" ? req.headers.origin : undefined;
    // Every page may read the answer, a refusal included: a page of an origin no project allows is
    // told so by name (a browser that may not read it reports only a network error). Whether a
    // badge is issued is decided by the origin, never by CORS.
    const cors: Record<string, string> = origin ? { "Access-Control-Allow-Origin": origin, Vary: "Origin" } : { Vary: "Origin" };
    const send = (status: number, body: object, extra: Record<string, string> = {}) => {
      res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...cors, ...extra });
      res.end(JSON.stringify(body));
    };
    const path = (req.url ?? "").split("?")[0];
    if (req.method === "GET" && path === "/health") return send(200, { ok: true });
    if (path !== BADGE_PATH) return send(404, { error: `only POST ${BADGE_PATH} is served here` });
    if (req.method === "OPTIONS") {
      if (!origin) return send(403, { error: "a CORS preflight names its Origin" });
      res.writeHead(204, { ...cors, "Access-Control-Allow-Methods": "POST", "Access-Control-Allow-Headers": "Content-Type", "Access-Control-Max-Age": "600" });
      return res.end();
    }
    if (req.method !== "POST") return send(405, { error: `POST ${BADGE_PATH}` }, { Allow: "POST, OPTIONS" });
    const text = await readBody(req, res);
    if (text === undefined) return;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const d = decide(origin, body, byId, now(), randomBytes(16).toString("base64url"));
    if (d.status !== 200) {
      log(`badge refused ${d.status}: ${d.error}`);
      return send(d.status, { error: d.error });
    }
    const key = await signBadge(d.claims, o.key);
    log(`badge issued project=${d.claims.sub} origin=${origin} chains=${Object.keys(d.claims.chains).join(",")} expires=${new Date(d.claims.exp * 1000).toISOString()}`);
    send(200, { key, expiresAt: new Date(d.claims.exp * 1000).toISOString(), expiresIn: d.claims.exp - d.claims.iat });
  });
}

/** The body, up to MAX_BODY bytes; over it the request is answered 413 and undefined returned. */
function readBody(req: IncomingMessage, res: ServerResponse): Promise<string | undefined> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (d: Buffer) => {
      size += d.length;
      if (size > MAX_BODY) {
        res.writeHead(413, { "Content-Type": "application/json", Connection: "close" });
        res.end(JSON.stringify({ error: `badge request larger than ${MAX_BODY} bytes` }));
        req.destroy();
        resolve(undefined);
      } else parts.push(d);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", () => resolve(undefined));
  });
}
