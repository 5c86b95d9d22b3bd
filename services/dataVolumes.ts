/** The chain-data volumes of the nodes on a host, by layer, and how the disk watcher and the readiness check mount them. */
import { MAIN_HOST, type StackSettings } from "../config/index.js";
import { placedNodes } from "./nodes.js";
import type { VolumeMount, VolumeSpec } from "./types.js";

/** Chain-data volume keys the nodes on a host (the stack's own unless named) write, per layer (the JWT volume holds 64 bytes: not watched). */
export function dataVolumes(settings: StackSettings, host = MAIN_HOST): { l1: string[]; l2: string[] } {
  const nodes = placedNodes(settings);
  const keys = (layer: "l1" | "l2") => nodes[layer].filter((n) => n.slot.host === host).flatMap((n) => n.dataVolumes.map((v) => v.key));
  return { l1: keys("l1"), l2: keys("l2") };
}

/** The data volumes as another group's: what a group that only mounts them declares. */
export function externalDataVolumes(settings: StackSettings, host = MAIN_HOST): VolumeSpec[] {
  const keys = new Set(dataVolumeMounts(settings, host).map((m) => m.volume));
  const nodes = placedNodes(settings);
  return [...nodes.l1, ...nodes.l2].flatMap((n) => n.role.volumes).filter((v) => keys.has(v.key)).map((v) => ({ ...v, external: true }));
}

/** Each data volume, read-only, at /volumes/<key>: for the watcher and the readiness check. */
export function dataVolumeMounts(settings: StackSettings, host = MAIN_HOST): VolumeMount[] {
  const { l1, l2 } = dataVolumes(settings, host);
  return [...l1, ...l2].map((key) => ({ volume: key, path: `/volumes/${key}`, readOnly: true }));
}

/** `--disk`/`--volume` arguments naming each mounted volume. */
export const volumeArgs = (flag: string, settings: StackSettings, host = MAIN_HOST) => dataVolumeMounts(settings, host).flatMap((m) => [flag, `${m.volume}=${m.path}`]);
