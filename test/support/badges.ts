/** A badge service on loopback for the tests, with a signing key of its own, and badges made by hand. */
import { generateKeyPairSync } from "node:crypto";
import type { Server } from "node:http";
import type { ServiceProject } from "../../badges/issue.js";
import { createBadgeServer } from "../../badges/server.js";
import { readSigningKey, signBadge, type SigningKey } from "../../badges/token.js";
import { listenLoopback } from "./http.js";

export const newSigningKey = (): SigningKey =>
  readSigningKey(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "der" }).toString("base64"));

export interface RunningBadgeService {
  readonly key: SigningKey;
  /** host:port, as the gateway's `badges.service` names it. */
  readonly address: string;
  readonly log: string[];
  stop(): Promise<void>;
}

export async function startBadgeService(projects: readonly ServiceProject[], key = newSigningKey()): Promise<RunningBadgeService> {
  const log: string[] = [];
  const server: Server = createBadgeServer({ projects, key, log: (l) => log.push(l) });
  const url = await listenLoopback(server);
  return { key, address: new URL(url).host, log, stop: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A badge signed with `key` (claims as the service makes them, any of them replaced). */
export function makeBadge(key: SigningKey, claims: Partial<{ sub: string; chains: Record<string, 1>; alw: number; jti: string; iat: number; exp: number }>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signBadge({ iss: "rpcstack-badges", sub: "web", chains: { eth: 1 }, alw: 100, jti: `t${Math.random().toString(36).slice(2)}`, iat: now, exp: now + 60, ...claims }, key);
}
