/** Argument checks shared by the readiness commands (rpcstack-ready, rpcstack-disk). */
import type { DiskThresholds } from "./disk.js";

/** A bad argument: the command prints the message and exits 2. */
export class UsageError extends Error {}

/** `--name`'s number, `fallback` when absent; `max` and `integer` where the option needs them. */
export function numberArg(name: string, v: string | undefined, fallback: number, bounds: { min: number; max?: number; integer?: boolean }): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  const { min, max = Infinity, integer = false } = bounds;
  if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    const what = integer ? "an integer" : "a number";
    throw new UsageError(`--${name} must be ${what} ${max === Infinity ? `>= ${min}` : `${min}-${max}`} (got "${v}")`);
  }
  return n;
}

/** Warn and stop percentages from their two options (85 and 95 by default); warn above stop is refused. */
export function thresholdArgs(warnName: string, warn: string | undefined, stopName: string, stop: string | undefined): DiskThresholds {
  const t = { warnPercent: numberArg(warnName, warn, 85, { min: 1, max: 100, integer: true }), stopPercent: numberArg(stopName, stop, 95, { min: 1, max: 100, integer: true }) };
  if (t.warnPercent > t.stopPercent) throw new UsageError(`--${warnName} must not be above --${stopName}`);
  return t;
}
