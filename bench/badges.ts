/**
 * The badge case of `npm run bench`: a second gateway with badges on, relaying the same call with
 * a badge and with a project key, so one run shows what checking a badge costs (badge over
 * badge-key) and what turning badges on costs the project keys (badge-key over gateway).
 */
import type { ChildProcess } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { readSigningKey, signBadge } from "../badges/token.js";
import { BENCH_KEY, startBenchGateway } from "./gateway.js";

export interface BadgeBench {
  readonly pid: number;
  readonly proc: ChildProcess;
  readonly http: { readonly "badge-key": string; readonly badge: string };
  readonly ws: { readonly "badge-key": string; readonly badge: string };
}

export async function startBadgeBench(work: string, upstreams: { rpcHttp: string; rpcWs: string }, threads: number): Promise<BadgeBench> {
  const key = readSigningKey(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "der" }).toString("base64"));
  const now = Math.floor(Date.now() / 1000);
  // One badge for the whole run: an allowance no run reaches, a lifetime no run outlasts.
  const badge = await signBadge({ iss: "rpcstack-badges", sub: "bench", chains: { eth: 1 }, alw: 1e12, jti: "bench", iat: now, exp: now + 6 * 3600 }, key);
  const gw = await startBenchGateway({ work, name: "gw-badges", chains: [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams }], threads, badgePublicKey: key.publicKeyPem });
  const at = (scheme: string, iface: string, k: string, q = "") => `${scheme}${gw.origin.slice(gw.origin.indexOf(":"))}/gateway/eth/${iface}/${k}${q}`;
  return {
    pid: gw.pid,
    proc: gw.proc,
    http: { "badge-key": at("https", "rpc-http", BENCH_KEY), badge: at("https", "rpc-http", badge) },
    ws: { "badge-key": at("wss", "rpc", BENCH_KEY, "?secret=null"), badge: at("wss", "rpc", badge, "?secret=null") },
  };
}
