/** Rules for rpcstack:badges: each project names chains this gateway serves, unique ids, origins a browser can be trusted on. */
import { problem } from "./errors.js";
import { isObj, isStr } from "./guards.js";
import type { NetworkDefaults } from "./networks/index.js";
import type { RawConfig } from "./types.js";

/** Plain-HTTP pages are for development on this machine: anywhere else a badge would travel in clear. */
const LOOPBACK_ORIGIN = /^http:\/\/(localhost|127\.0\.0\.1)(:[0-9]+)?$/;

export function badgeProblems(raw: RawConfig, network: NetworkDefaults | undefined): string[] {
  const b = raw.badges;
  if (!isObj(b) || !Array.isArray(b.projects)) return [];
  const out: string[] = [];
  const gw = isObj(raw.gateway) ? raw.gateway : {};
  const servesL1 = !(isObj(raw.l1) && raw.l1.external !== undefined && gw.relayExternalL1 === false);
  const served = network
    ? [...(servesL1 ? [network.chains.l1.chainId] : []), network.chains.l2.chainId, ...(Array.isArray(gw.chains) ? gw.chains.map((c) => (isObj(c) ? c.chainId : undefined)).filter(isStr) : [])]
    : undefined;
  const ids = new Map<string, number>();
  b.projects.forEach((p, i) => {
    if (!isObj(p)) return;
    const at = (...k: (string | number)[]) => ["badges", "projects", i, ...k];
    if (isStr(p.projectId)) {
      if (ids.has(p.projectId)) out.push(problem(at("projectId"), `"${p.projectId}" is already used by badges.projects[${ids.get(p.projectId)}]`));
      else ids.set(p.projectId, i);
    }
    if (served && Array.isArray(p.chains)) {
      p.chains.forEach((c, j) => {
        if (isStr(c) && !served.includes(c)) out.push(problem(at("chains", j), `"${c}" is not a chain this gateway serves (${served.join(", ")})`));
      });
    }
    if (Array.isArray(p.origins)) {
      p.origins.forEach((o, j) => {
        if (isStr(o) && o.startsWith("http://") && !LOOPBACK_ORIGIN.test(o)) {
          out.push(problem(at("origins", j), `"${o}" is a plain-HTTP page: badges would travel in clear; use its https:// origin (http:// is accepted for localhost and 127.0.0.1 only)`));
        }
      });
    }
  });
  return out;
}
