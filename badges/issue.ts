/**
 * Which badge a request gets, or why it gets none. Pure: the server (badges/server.ts) reads the
 * request, this decides, token.ts signs.
 *
 * The contract is the client library's (client/badge.ts):
 *   POST /badge  Origin: <page origin>  { "projectId": "<id>", "chainIds": ["STRK", ...] }
 *   200 { "key": "<badge>", "expiresAt": "<ISO 8601>", "expiresIn": <seconds> }
 *   4xx { "error": "<why>" }
 * The token itself (claims, algorithm, skew) is the gateway's contract: gateway/badgeContract.ts.
 */
import { BADGE_ISSUER, type BadgeClaims } from "../gateway/badgeContract.js";

/** One project as the service knows it: its chains by chain id, with the claim the gateway checks for each. */
export interface ServiceProject {
  readonly projectId: string;
  /** Chain id (`STRK`) -> the chain's claim under `chains` (gateway/badgeContract.ts chainClaim, from its path). */
  readonly chains: Readonly<Record<string, string>>;
  readonly origins: readonly string[];
  readonly lifetimeSeconds: number;
  readonly allowance: number;
}

export type Decision = { readonly status: 200; readonly claims: BadgeClaims } | { readonly status: 400 | 403 | 404; readonly error: string };

const refuse = (status: 400 | 403 | 404, error: string): Decision => ({ status, error });

export function decide(origin: string | undefined, body: unknown, projects: ReadonlyMap<string, ServiceProject>, now: number, jti: string): Decision {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return refuse(400, 'the body must be a JSON object: { "projectId": "...", "chainIds": ["..."] }');
  const { projectId, chainIds } = body as { projectId?: unknown; chainIds?: unknown };
  if (typeof projectId !== "string" || !projectId) return refuse(400, "projectId must be a non-empty string");
  if (!Array.isArray(chainIds) || !chainIds.length || !chainIds.every((c) => typeof c === "string")) return refuse(400, 'chainIds must list one or more chain ids, like ["STRK"]');
  if (!origin) return refuse(403, "no Origin header: badges are for web pages, whose browser names the page's origin; a back end uses a project key");
  const project = projects.get(projectId);
  // Which project ids exist is no secret: every page (and any script) can tell 404 from 403.
  if (!project) return refuse(404, `unknown project "${projectId.slice(0, 64)}"`);
  if (!project.origins.includes(origin)) return refuse(403, `origin ${origin.slice(0, 200)} may not ask for badges of project ${projectId}`);
  // Own chains only: `in` would take an inherited name (constructor, __proto__) for a chain.
  const outside = (chainIds as string[]).filter((c) => !Object.hasOwn(project.chains, c));
  if (outside.length) return refuse(403, `chain ${outside[0].slice(0, 32)} is outside project ${projectId}'s scope (${Object.keys(project.chains).join(", ")})`);
  const chains = Object.fromEntries((chainIds as string[]).map((c) => [project.chains[c], 1 as const]));
  return { status: 200, claims: { iss: BADGE_ISSUER, sub: projectId, chains, alw: project.allowance, jti, iat: now, exp: now + project.lifetimeSeconds } };
}

/** RPCSTACK_BADGE_PROJECTS as the service reads it: a list of ServiceProject, checked field by field. */
export function parseProjects(text: string | undefined): ServiceProject[] {
  if (!text) throw new Error("RPCSTACK_BADGE_PROJECTS is not set (a JSON list of projects)");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error("RPCSTACK_BADGE_PROJECTS is not JSON");
  }
  if (!Array.isArray(raw) || !raw.length) throw new Error("RPCSTACK_BADGE_PROJECTS must list at least one project");
  return raw.map((p, i) => {
    const at = `RPCSTACK_BADGE_PROJECTS[${i}]`;
    const ok =
      typeof p === "object" && p !== null &&
      typeof p.projectId === "string" &&
      typeof p.chains === "object" && p.chains !== null && Object.values(p.chains).every((v) => typeof v === "string") &&
      Array.isArray(p.origins) && p.origins.every((o: unknown) => typeof o === "string") &&
      Number.isInteger(p.lifetimeSeconds) && p.lifetimeSeconds > 0 &&
      Number.isInteger(p.allowance) && p.allowance > 0;
    if (!ok) throw new Error(`${at} must be { projectId, chains: { CHAINID: "claim" }, origins: [...], lifetimeSeconds, allowance }`);
    return p as ServiceProject;
  });
}
