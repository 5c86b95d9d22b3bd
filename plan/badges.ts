/** Badges in the plan: the gateway's badge options and the badge service's projects, from the settings and the served surface. Pure. */
import type { StackSettings } from "../config/index.js";
import { chainClaim } from "../gateway/badgeContract.js";
import type { BadgeGatewayOptions } from "../gateway/types.js";
import { BADGE_SERVICE } from "../services/index.js";
import type { Surface } from "./surface.js";

/** What the gateway needs to check badges; absent without `badges`. */
export function badgeGatewayOptions(settings: StackSettings): BadgeGatewayOptions | undefined {
  const b = settings.badges;
  if (!b) return undefined;
  const rates = b.projects.flatMap((p) => (p.ratePerSecond !== undefined ? [[p.projectId, p.ratePerSecond] as const] : []));
  return {
    service: BADGE_SERVICE,
    projects: b.projects.map((p) => p.projectId),
    perAddressPerMinute: b.perAddressPerMinute,
    ...(rates.length > 0 ? { ratePerSecond: Object.fromEntries(rates) } : {}),
  };
}

/** RPCSTACK_BADGE_PROJECTS: each project with its chains' claims (the gateway checks the claim of the path it serves the chain at). */
export function badgeServiceProjects(settings: StackSettings, surface: Surface): string | undefined {
  const b = settings.badges;
  if (!b) return undefined;
  const pathOf = new Map(surface.chains.map((c) => [c.chainId, c.path]));
  return JSON.stringify(
    b.projects.map((p) => ({
      projectId: p.projectId,
      // The rules refused chains the stack does not serve.
      chains: Object.fromEntries(p.chains.map((id) => [id, chainClaim(pathOf.get(id)!)])),
      origins: p.origins,
      lifetimeSeconds: p.lifetimeSeconds,
      allowance: p.allowance,
    })),
  );
}

/** Origins a browser may call the gateway from: with badges, their pages' origins join the configured ones. */
export function corsOriginsWithBadges(settings: StackSettings): readonly string[] {
  const own = settings.gateway.corsOrigins;
  if (own.includes("*") || !settings.badges) return own;
  return [...new Set([...own, ...settings.badges.projects.flatMap((p) => p.origins)])];
}
