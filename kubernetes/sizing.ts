/**
 * Requests, limits and claim sizes, as the plan states them: a node asks for its client's memory
 * (config/sizing.ts) and a share of the tier's cores, and may use up to the tier's memory; no CPU
 * limit, so a syncing node is never throttled. The gateway asks for what the compiled
 * configuration reports. A claim holds what its volume's chain data (or other data) needs. Pure.
 */
import { stackSizing, type StackSettings } from "../config/index.js";
import type { GatewayCompiled } from "../gateway/types.js";
import type { ServiceSpec, VolumeSpec } from "../services/index.js";
import type { Resources } from "./pods.js";

/** A small program beside the nodes (health, indexer, usage, badges, init containers). */
export const SMALL: Resources = { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "512Mi" } };
/** A trial chain in memory (devnet), no table. */
const TRIAL: Resources = { requests: { cpu: "250m", memory: "512Mi" }, limits: { memory: "4Gi" } };

/** The gateway's HAProxy: its own and the cache's memory, and every buffer it may allocate on top (an OOM kill takes a replica). */
export const gatewayResources = (m: GatewayCompiled["memoryMiB"]): Resources => ({ requests: { cpu: "500m", memory: `${m.request}Mi` }, limits: { memory: `${m.limit}Mi` } });

export function nodeResources(s: StackSettings, svc: ServiceSpec): Resources {
  const z = stackSizing(s);
  const need = z?.nodes.find((n) => n.client === svc.client);
  if (!z || !need) return TRIAL;
  const cpu = Math.max(500, Math.floor((s.tier.cores * 1000) / z.nodes.length));
  return { requests: { cpu: `${cpu}m`, memory: `${need.memoryGiB}Gi` }, limits: { memory: `${Math.max(need.memoryGiB, s.tier.memoryGiB)}Gi` } };
}

/**
 * A chain-data claim's request. The plan's figure is in GB and the claim asks for as many GiB: 7%
 * more than the table's need, and the unit every deployed StatefulSet was given (a claim
 * template cannot change in place).
 */
export function claimStorage(v: VolumeSpec): string {
  const gb = v.chainData?.sizeGB ?? v.sizeGB;
  if (gb === undefined) throw new Error(`kubernetes: volume ${v.key} is kept in a claim but the plan gives it no size`);
  return `${gb}Gi`;
}
