/** Rules for rpcstack:gateway (its chains, maps keyed by chain, cache) and rpcstack:projectKeys, beside config/rules.ts. */
import { problem } from "./errors.js";
import { isObj, isStr } from "./guards.js";
import type { NetworkDefaults } from "./networks/index.js";
import type { RawConfig } from "./types.js";

export function gatewayProblems(raw: RawConfig, network: NetworkDefaults | undefined, hostKind: unknown): string[] {
  const out: string[] = [];
  const gw: NonNullable<RawConfig["gateway"]> = isObj(raw.gateway) ? raw.gateway : {};
  // A devnet trial on an ssh host or a cluster may go without a domain: its gateway has a self-signed certificate.
  if (hostKind !== undefined && hostKind !== "local" && gw.domain === undefined && !(network?.dev && (hostKind === "ssh" || hostKind === "kubernetes"))) {
    out.push(problem(["gateway", "domain"], `is required when rpcstack:host.kind is ${String(hostKind)} (the public TLS certificate is issued for it)`));
  }
  // On kubernetes the certificate comes from a TLS Secret (config/kubernetesRules.ts).
  if (gw.domain !== undefined && gw.acmeEmail === undefined && hostKind !== "kubernetes") {
    out.push(problem(["gateway", "acmeEmail"], "is required with rpcstack:gateway.domain (the ACME account for its certificate)"));
  }
  if (Array.isArray(gw.chains)) out.push(...chainProblems(gw.chains, network));
  // Maps keyed by chain path name only chains this gateway serves.
  if (network) {
    const served = [network.chains.l1.path, network.chains.l2.path, ...(Array.isArray(gw.chains) ? gw.chains.map((c) => (isObj(c) ? c.path : undefined)) : [])];
    const byPath: [string[], unknown][] = [[["gateway", "methodPolicy"], gw.methodPolicy], [["gateway", "cache", "chains"], isObj(gw.cache) ? gw.cache.chains : undefined]];
    for (const [key, map] of byPath) {
      if (!isObj(map)) continue;
      for (const path of Object.keys(map)) {
        if (!served.includes(path)) out.push(problem([...key, path], `is not a chain this gateway serves (${served.filter(isStr).join(", ")})`));
      }
    }
  }
  if (isObj(gw.cache) && typeof gw.cache.maxBytes === "number" && typeof gw.cache.maxObjectBytes === "number" && gw.cache.maxObjectBytes > gw.cache.maxBytes) {
    out.push(problem(["gateway", "cache", "maxObjectBytes"], `is larger than rpcstack:gateway.cache.maxBytes (${gw.cache.maxBytes}): no answer that size could be held`));
  }

  if (Array.isArray(gw.quotas)) out.push(...quotaProblems(gw.quotas, raw));
  return out;
}

/**
 * Quotas name a project key, or a badge project as `badge:<projectId>` (its badges are counted
 * apart from any key), once each. Tools that never see secrets have no projectKeys: then only badge
 * projects are known, and unknown plain names are not reported.
 */
function quotaProblems(quotas: unknown[], raw: RawConfig): string[] {
  const out: string[] = [];
  const keyNames = Array.isArray(raw.projectKeys) ? raw.projectKeys.flatMap((k) => (isObj(k) && isStr(k.name) ? [k.name] : [])) : undefined;
  const projects = isObj(raw.badges) && Array.isArray(raw.badges.projects) ? raw.badges.projects.flatMap((p) => (isObj(p) && isStr(p.projectId) ? [p.projectId] : [])) : [];
  const seen = new Map<string, number>();
  quotas.forEach((q, i) => {
    if (!isObj(q) || !isStr(q.name)) return;
    const at = ["gateway", "quotas", i, "name"];
    if (seen.has(q.name)) out.push(problem(at, `"${q.name}" already has a quota in gateway.quotas[${seen.get(q.name)}]`));
    else seen.set(q.name, i);
    const project = q.name.startsWith("badge:") ? q.name.slice("badge:".length) : undefined;
    if (project !== undefined) {
      if (!projects.includes(project)) out.push(problem(at, `"${q.name}" names no badge project: "${project}" is not in rpcstack:badges.projects`));
    } else if (keyNames && !keyNames.includes(q.name)) {
      // A project's badges are counted apart from a project key of the same name.
      out.push(problem(at, projects.includes(q.name)
        ? `"${q.name}" is a badge project's id, not a project key's name: its badges have a quota of their own, named "badge:${q.name}"`
        : `"${q.name}" is neither a project key's name (rpcstack:projectKeys) nor "badge:" and a badge project's id (rpcstack:badges.projects)`));
    }
  });
  return out;
}

/** Project keys: unique names and keys, each hard enough to guess. */
export function projectKeyProblems(raw: RawConfig): string[] {
  const out: string[] = [];
  if (Array.isArray(raw.projectKeys)) {
    const names = new Map<string, number>();
    const keys = new Map<string, number>();
    raw.projectKeys.forEach((pk, i) => {
      if (!isObj(pk)) return;
      if (isStr(pk.name)) {
        if (names.has(pk.name)) out.push(problem(["projectKeys", i, "name"], `"${pk.name}" is already used by projectKeys[${names.get(pk.name)}]`));
        else names.set(pk.name, i);
      }
      if (isStr(pk.key)) {
        // Never echo a key: name the other entry instead.
        if (keys.has(pk.key)) out.push(problem(["projectKeys", i, "key"], `is the same key as projectKeys[${keys.get(pk.key)}]`));
        else keys.set(pk.key, i);
        if (keyEntropyBits(pk.key) < MIN_KEY_BITS) out.push(problem(["projectKeys", i, "key"], `is too easy to guess (repeated or few distinct characters): generate one with node -e 'console.log(require("crypto").randomBytes(32).toString("base64url"))'`));
      }
    });
  }
  return out;
}

/**
 * Estimated entropy of a key from its own characters (length x Shannon entropy per character).
 * 32 random URL-safe characters score about 140 bits, 32 random hex digits about 120; 32 x "a"
 * scores 0 and "abab..." 32.
 */
export const MIN_KEY_BITS = 96;
export function keyEntropyBits(key: string): number {
  const counts = new Map<string, number>();
  for (const ch of key) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let perChar = 0;
  for (const n of counts.values()) perChar -= (n / key.length) * Math.log2(n / key.length);
  return perChar * key.length;
}

const NEEDED_UPSTREAMS = {
  evm: ["rpcHttp"],
  starknet: ["rpcHttp"],
  cosmos: ["rpcHttp", "rest"],
} as const;

/**
 * Each replica serves what the chain's first node serves, at the same path and scheme (the gateway
 * rewrites a call's path once for all nodes), and at an address of its own.
 */
function replicaProblems(i: number, ups: Record<string, unknown>, replicas: unknown[]): string[] {
  const out: string[] = [];
  const interfaces = Object.keys(ups);
  const shape = (v: unknown) => {
    try {
      const u = new URL(String(v));
      return { scheme: u.protocol, path: u.pathname.replace(/\/+$/, ""), authority: u.host };
    } catch {
      return undefined;
    }
  };
  const seen = new Map(interfaces.map((k) => [k, new Set([shape(ups[k])?.authority])]));
  replicas.forEach((r, j) => {
    if (!isObj(r)) return;
    const at = ["gateway", "chains", i, "replicas", j];
    const missing = interfaces.filter((k) => r[k] === undefined);
    const extra = Object.keys(r).filter((k) => !interfaces.includes(k));
    if (missing.length) out.push(problem(at, `lacks ${missing.join(", ")}: every replica names the interfaces upstreams names (${interfaces.join(", ")})`));
    if (extra.length) out.push(problem(at, `names ${extra.join(", ")}, which upstreams does not: every replica names the interfaces upstreams names (${interfaces.join(", ")})`));
    for (const k of interfaces.filter((k) => r[k] !== undefined)) {
      const [mine, first] = [shape(r[k]), shape(ups[k])];
      if (!mine || !first) continue;
      if (mine.scheme !== first.scheme || mine.path !== first.path) out.push(problem([...at, k], `must have the scheme and path of upstreams.${k} (${first.scheme}//...${first.path || "/"}): the gateway rewrites a call's path once for every node`));
      if (seen.get(k)!.has(mine.authority)) out.push(problem([...at, k], `${mine.authority} is already a node of this chain`));
      seen.get(k)!.add(mine.authority);
    }
  });
  return out;
}

function chainProblems(chains: unknown[], network: NetworkDefaults | undefined): string[] {
  const out: string[] = [];
  const paths = new Map<string, string>();
  const ids = new Map<string, string>();
  if (network) {
    for (const c of [network.chains.l1, network.chains.l2]) {
      paths.set(c.path, `the built-in ${c.chainId} chain`);
      ids.set(c.chainId, `the built-in /gateway/${c.path} chain`);
    }
  }
  const hostnames = new Map<string, string>();
  chains.forEach((c, i) => {
    if (!isObj(c)) return;
    if (isStr(c.path)) {
      if (paths.has(c.path)) out.push(problem(["gateway", "chains", i, "path"], `"${c.path}" is already used by ${paths.get(c.path)}`));
      else paths.set(c.path, `gateway.chains[${i}]`);
    }
    if (isStr(c.chainId)) {
      if (ids.has(c.chainId)) out.push(problem(["gateway", "chains", i, "chainId"], `"${c.chainId}" is already used by ${ids.get(c.chainId)}`));
      else ids.set(c.chainId, `gateway.chains[${i}]`);
    }
    const kind = c.kind;
    if (kind === "evm" || kind === "starknet" || kind === "cosmos") {
      const ups = isObj(c.upstreams) ? c.upstreams : {};
      for (const need of NEEDED_UPSTREAMS[kind]) {
        if (ups[need] === undefined) out.push(problem(["gateway", "chains", i, "upstreams", need], `is required for a ${kind} chain`));
      }
      if (kind !== "cosmos" && (ups.rest !== undefined || ups.grpc !== undefined)) {
        out.push(problem(["gateway", "chains", i, "upstreams"], `rest and grpc upstreams are for cosmos chains, not ${kind}`));
      }
      if (kind !== "cosmos" && c.hostnames !== undefined) {
        out.push(problem(["gateway", "chains", i, "hostnames"], `public hostnames are for cosmos chains, not ${kind}`));
      }
      if (Array.isArray(c.replicas)) out.push(...replicaProblems(i, ups, c.replicas));
    }
    if (isObj(c.hostnames)) {
      const ups = isObj(c.upstreams) ? c.upstreams : {};
      const upstreamFor = { tendermintRpc: "rpcHttp", rest: "rest", grpc: "grpc" } as const;
      for (const [role, h] of Object.entries(c.hostnames)) {
        if (!isStr(h)) continue;
        if (hostnames.has(h)) out.push(problem(["gateway", "chains", i, "hostnames", role], `"${h}" is already used by ${hostnames.get(h)}`));
        else hostnames.set(h, `gateway.chains[${i}].hostnames.${role}`);
        const need = upstreamFor[role as keyof typeof upstreamFor];
        if (need && ups[need] === undefined) {
          out.push(problem(["gateway", "chains", i, "hostnames", role], `needs rpcstack:gateway.chains[${i}].upstreams.${need} to serve it`));
        }
      }
    }
  });
  return out;
}

