/**
 * Starknet spec versions on the gateway's paths: `/gateway/<chain>/rpc-http/<KEY>/v0_9` (and the
 * WebSocket's `/gateway/<chain>/rpc/<KEY>/v0_9`) reach the same version on every node of the
 * chain; the unversioned path reaches the version the stack pins. The version is the last path
 * segment, spelled as the nodes spell their own paths, so it reads as the node path it selects.
 *
 * A served version is taken off `txn.rest` early, so every check written for the unversioned path
 * (method policy, key, limits, health gates, routes) applies to it unchanged; a version other than
 * the pinned one also sets the node path (SPEC_PATH) the route backends rewrite to. Pure.
 */
import { refuse } from "./errors.js";
import { anon, req, type Cond, type Rule } from "./model.js";
import { SPEC_PATH, exactPath, on } from "./routes.js";
import type { GatewayChain } from "./types.js";

/** Set while a request asks for a version other than the pinned one: the response cache keeps only the pinned version's answers. */
export const OTHER_VERSION: Cond = anon(`var(${SPEC_PATH})`, "-m", "found");

const ifaces = [["rpc-http", "http"], ["rpc", "ws"]] as const;

/** The rules that recognise a served version, right after the path is split. */
export function specRules(c: GatewayChain): Rule[] {
  const spec = c.specVersions;
  if (!spec) return [];
  const rules: Rule[] = [];
  for (const [iface, kind] of ifaces) {
    for (const [version, paths] of Object.entries(spec.paths)) {
      const asked = [...on(c, iface), ...anon("var(txn.rest)", "-m", "str", `/${version}`)];
      if (version !== spec.pinned) rules.push(req([`set-var(${SPEC_PATH})`, `str(${paths[kind]})`], asked));
      rules.push(req(["set-var(txn.rest)", "var(txn.rest),regsub(^/v0_[0-9]+$,)"], asked));
    }
  }
  return rules;
}

/** The versions a chain serves, as the 404 for any other names them. */
export const servedList = (c: GatewayChain): string => Object.keys(c.specVersions!.paths).join(", ");

/** Gates: any other path below the key is a version no node of the chain serves, and never reaches one. */
export function specGates(c: GatewayChain): Rule[] {
  if (!c.specVersions) return [];
  const message = `unknown JSON-RPC spec version; ${c.chainId} serves ${servedList(c)} (the path without a version: ${c.specVersions.pinned})`;
  return ifaces.map(([iface]) => refuse(404, message, [...on(c, iface), "!", ...exactPath]));
}
