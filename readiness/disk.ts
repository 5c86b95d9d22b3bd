/**
 * What a data volume's use means (volumes/space.ts measures it): a warning above `warnPercent`, out of the
 * gateway's rotation above `stopPercent` (a node whose disk fills stops following the chain and
 * would serve stale answers).
 */
import { numberArg, UsageError } from "../kit/args.js";
import type { VolumeUse } from "../volumes/space.js";

export interface DiskThresholds {
  readonly warnPercent: number;
  readonly stopPercent: number;
}

export type Verdict = "ok" | "warn" | "full";

export function verdict(use: VolumeUse, t: DiskThresholds): Verdict {
  return use.usedPercent > t.stopPercent ? "full" : use.usedPercent > t.warnPercent ? "warn" : "ok";
}

const pct = (n: number) => `${n.toFixed(1)}%`;

export function describeUse(use: VolumeUse, t: DiskThresholds): string {
  const v = verdict(use, t);
  const gb = (b: number) => `${(b / 1e9).toFixed(1)} GB`;
  const base = `volume ${use.name} is ${pct(use.usedPercent)} full (${gb(use.availableBytes)} free of ${gb(use.sizeBytes)})`;
  if (v === "full") return `${base}: above ${t.stopPercent}%, the gateway stops routing to its node`;
  if (v === "warn") return `warning: ${base}: above ${t.warnPercent}%; grow the disk or prune before it reaches ${t.stopPercent}%`;
  return base;
}

/** Prometheus text exposition: one gauge per volume. */
export function metricsText(uses: readonly VolumeUse[], t: DiskThresholds): string {
  const lines = [
    "# HELP rpcstack_volume_used_ratio Share of the data volume in use (0-1), as df computes it.",
    "# TYPE rpcstack_volume_used_ratio gauge",
    ...uses.map((u) => `rpcstack_volume_used_ratio{volume="${u.name}"} ${(u.usedPercent / 100).toFixed(4)}`),
    "# HELP rpcstack_volume_available_bytes Bytes a non-root writer can still use on the data volume.",
    "# TYPE rpcstack_volume_available_bytes gauge",
    ...uses.map((u) => `rpcstack_volume_available_bytes{volume="${u.name}"} ${u.availableBytes}`),
    "# HELP rpcstack_volume_stop_ratio Use above which the gateway stops routing to the volume's node.",
    "# TYPE rpcstack_volume_stop_ratio gauge",
    `rpcstack_volume_stop_ratio ${t.stopPercent / 100}`,
    "# HELP rpcstack_volume_warn_ratio Use above which readiness warns.",
    "# TYPE rpcstack_volume_warn_ratio gauge",
    `rpcstack_volume_warn_ratio ${t.warnPercent / 100}`,
  ];
  return `${lines.join("\n")}\n`;
}

/** `NAME:VOL,VOL=URL`: a health check the watcher answers for, gated on those volumes. */
export function parseCheckArg(v: string): { name: string; volumes: string[]; url: string } | undefined {
  const m = /^([a-z0-9-]+):([a-z0-9-]+(?:,[a-z0-9-]+)*)=(https?:\/\/\S+)$/.exec(v);
  return m ? { name: m[1], volumes: m[2].split(","), url: m[3] } : undefined;
}

/** `name=/path` pairs from the command line. */
export function parseVolumeArg(v: string): { name: string; path: string } | undefined {
  const m = /^([a-z0-9-]+)=(\/.*)$/.exec(v);
  return m ? { name: m[1], path: m[2] } : undefined;
}

/** Warn and stop percentages from their two options (85 and 95 by default); warn above stop is refused. */
export function thresholdArgs(warnName: string, warn: string | undefined, stopName: string, stop: string | undefined): DiskThresholds {
  const t = { warnPercent: numberArg(warnName, warn, 85, { min: 1, max: 100, integer: true }), stopPercent: numberArg(stopName, stop, 95, { min: 1, max: 100, integer: true }) };
  if (t.warnPercent > t.stopPercent) throw new UsageError(`--${warnName} must not be above --${stopName}`);
  return t;
}
