/** config -> service specs by role. The single source of truth for what runs; no Pulumi, no I/O. */
import type { StackSettings } from "../config/index.js";
import { gatewayRole, type GatewayRole } from "./gateway.js";
import { l1Role, type L1Role } from "./l1.js";
import { l2Role, type L2Role } from "./l2.js";
import { readinessRole, type ReadinessRole } from "./readiness.js";
import { furtherHostRoles, type HostRole } from "./hosts.js";
import type { PlacedNodes } from "./nodes.js";
import { rolledNodes } from "./rollout.js";
import type { GatewayHosting } from "./types.js";

export * from "./types.js";
export { PORTS } from "./ports.js";
export { l1Urls, l1Role, l1Services, JWT_PATH, type L1Role, type L1Urls } from "./l1.js";
export { l2Urls, l2Role, type L2Role, type L2Urls } from "./l2.js";
export { syncHealthUrls, readinessRole, SYNC_HEALTH_PORT, type ReadinessRole } from "./readiness.js";
export { BADGE_SERVICE, BADGE_SERVICE_PORT } from "./badges.js";
export { gatewayRole, certificateNames, GATEWAY_PATHS, METRICS_PORT, ACME_PORT, ADMIN_LOOPBACK_PORT, type GatewayRole } from "./gateway.js";
export { countersShared } from "./usage.js";

/** Every container of one stack, by role: built once per stack, read by the components and the exporter. */
export interface StackServices {
  /** Each layer's first node (a single-node stack's only one). */
  readonly l1: L1Role;
  readonly l2: L2Role;
  /** Every node, each layer's first included, with the steps of rolling upgrades where a layer has several. */
  readonly nodes: PlacedNodes;
  /** Further hosts' own services (their disk watchers). */
  readonly hosts: readonly HostRole[];
  readonly readiness: ReadinessRole;
  readonly gateway: GatewayRole;
}

/**
 * `hosting`: what the containers must know of the gateway; `haproxyEnvironment`: the compiled
 * gateway's needs for HAProxy's process; `badgeProjects`: the badge service's projects (plan/
 * passes them all: services/ does not read gateway/).
 */
export function buildServices(settings: StackSettings, hosting: GatewayHosting, haproxyEnvironment: Readonly<Record<string, string>> = {}, badgeProjects?: string): StackServices {
  const nodes = rolledNodes(settings, hosting.nodeBackSeconds);
  return {
    l1: (nodes.l1[0]?.role as L1Role | undefined) ?? l1Role(settings),
    l2: nodes.l2[0].role as L2Role,
    nodes,
    hosts: furtherHostRoles(settings),
    readiness: readinessRole(settings),
    gateway: gatewayRole(settings, hosting, haproxyEnvironment, badgeProjects),
  };
}
export * from "./files.js";
export { diskWatch, diskCheckUrl } from "./disk.js";
export { externalDataVolumes, dataVolumes, volumeArgs, dataVolumeMounts } from "./dataVolumes.js";
export { placedNodes, servedBySeveral, nodesOn, type PlacedNode, type PlacedNodes } from "./nodes.js";
export { nodeCheckUrl, nodeVerdictUrl } from "./disk.js";
export { furtherHostRoles, type HostRole } from "./hosts.js";
export { rolloutHoldSeconds, REVISION_VARIABLE } from "./rollout.js";
