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

/**
 * Runs a listener until SIGTERM or SIGINT: says where it serves once it listens, or why it cannot
 * (a bad --port or address: exit 2).
 */
export async function serveUntilSignal(name: string, service: { readonly ready: Promise<number>; stop(): void }, serving: (port: number) => string): Promise<number> {
  let port: number;
  try {
    port = await service.ready;
  } catch (e) {
    service.stop();
    process.stderr.write(`${name}: ${(e as Error).message}\n`);
    return 2;
  }
  process.stdout.write(`${name}: ${serving(port)}\n`);
  await new Promise<void>((resolve) => {
    for (const sig of ["SIGTERM", "SIGINT"] as const) process.once(sig, () => (service.stop(), resolve()));
  });
  return 0;
}
