/** Argument checks every program of the package shares: a bad value is a UsageError (exit 2). */

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
