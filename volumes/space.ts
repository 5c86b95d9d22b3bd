/** How much of a data volume is in use, as `df` shows it: what the disk watcher reports and a restore checks before it writes. */
import { statfs } from "node:fs/promises";

export interface VolumeUse {
  readonly name: string;
  /** Used share of what a non-root writer can use, in percent, as `df` shows it. */
  readonly usedPercent: number;
  readonly sizeBytes: number;
  readonly availableBytes: number;
}

/** `df`'s arithmetic: blocks reserved for root count neither as used nor as available. */
export async function volumeUse(name: string, path: string): Promise<VolumeUse> {
  const s = await statfs(path);
  const used = (s.blocks - s.bfree) * s.bsize;
  const available = s.bavail * s.bsize;
  const usable = used + available;
  return { name, usedPercent: usable > 0 ? (100 * used) / usable : 100, sizeBytes: s.blocks * s.bsize, availableBytes: available };
}
