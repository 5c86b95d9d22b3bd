/** The chain-data volumes by layer, and how the disk watcher and the readiness check mount them. */
import type { StackSettings } from "../config/index.js";
import { l1Volumes } from "./l1.js";
import { l2Volumes } from "./l2.js";
import type { VolumeMount, VolumeSpec } from "./types.js";

/** Chain-data volume keys the stack writes, per layer (the JWT volume holds 64 bytes: not watched). */
export function dataVolumes(settings: StackSettings): { l1: string[]; l2: string[] } {
  return {
    l1: l1Volumes(settings).filter((v) => v.key !== "jwt").map((v) => v.key),
    l2: l2Volumes(settings).map((v) => v.key),
  };
}

/** The data volumes as another group's: what a group that only mounts them declares. */
export function externalDataVolumes(settings: StackSettings): VolumeSpec[] {
  const keys = new Set(dataVolumeMounts(settings).map((m) => m.volume));
  return [...l1Volumes(settings), ...l2Volumes(settings)].filter((v) => keys.has(v.key)).map((v) => ({ ...v, external: true }));
}

/** Each data volume, read-only, at /volumes/<key>: for the watcher and the readiness check. */
export function dataVolumeMounts(settings: StackSettings): VolumeMount[] {
  const { l1, l2 } = dataVolumes(settings);
  return [...l1, ...l2].map((key) => ({ volume: key, path: `/volumes/${key}`, readOnly: true }));
}

/** `--disk`/`--volume` arguments naming each mounted volume. */
export const volumeArgs = (flag: string, settings: StackSettings) => dataVolumeMounts(settings).flatMap((m) => [flag, `${m.volume}=${m.path}`]);
