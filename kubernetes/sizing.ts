/**
 * Requests, limits and claim sizes from the stack's tier and the sizing table (config/sizing.ts).
 * A node asks for its client's memory and a share of the tier's cores, and may use up to the tier's
 * memory; no CPU limit, so a syncing node is never throttled. A claim holds the client's data at
 * sync plus `headroomMonths` of growth. Pure.
 */
import { stackSizing, type StackSettings } from "../config/index.js";
import { BUFFER_MEMORY } from "../gateway/limits.js";
import type { ServiceSpec } from "../services/index.js";
import type { Resources } from "./pods.js";

/** `geth-2` is a geth. */
const clientOf = (name: string) => name.replace(/-\d+$/, "");

/** A small program beside the nodes (health, indexer, usage, badges, init containers). */
const SMALL: Resources = { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "512Mi" } };
/** A trial chain in memory (devnet), no table. */
const TRIAL: Resources = { requests: { cpu: "250m", memory: "512Mi" }, limits: { memory: "4Gi" } };

export function resourcesFor(s: StackSettings, svc: ServiceSpec, role: "node" | "gateway" | "other"): Resources {
  if (role === "gateway") {
    // The response cache lives in HAProxy's memory: its budget plus the proxy's own; under load the
    // buffers HAProxy may allocate (gateway/limits.ts) come on top, and an OOM kill takes a replica.
    const mib = Math.ceil(s.gateway.cache.enabled ? s.gateway.cache.maxBytes / 2 ** 20 : 0) + 256;
    return { requests: { cpu: "500m", memory: `${mib}Mi` }, limits: { memory: `${mib + Math.ceil(BUFFER_MEMORY / 2 ** 20) + 256}Mi` } };
  }
  if (role !== "node") return SMALL;
  const z = stackSizing(s);
  const need = z?.nodes.find((n) => n.client === clientOf(svc.name));
  if (!z || !need) return TRIAL;
  const cpu = Math.max(500, Math.floor((s.tier.cores * 1000) / z.nodes.length));
  return { requests: { cpu: `${cpu}m`, memory: `${need.memoryGiB}Gi` }, limits: { memory: `${Math.max(need.memoryGiB, s.tier.memoryGiB)}Gi` } };
}

/** A chain-data claim's size in GiB: the client's data at sync and its growth over the headroom. */
export function claimGiB(s: StackSettings, volumeKey: string): number {
  const need = stackSizing(s)?.nodes.find((n) => n.client === clientOf(volumeKey));
  // A volume no table sizes (a devnet node's, were it to keep one): the smallest a cloud disk comes in.
  if (!need) return 10;
  return Math.ceil(need.diskGB + need.growthGBPerMonth * s.headroomMonths);
}
