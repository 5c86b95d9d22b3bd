/**
 * Argument checks every program of the package shares: a bad value is a UsageError (exit 2), and
 * the exit code a command line decides before the program runs (--help, a bad value).
 */

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

/**
 * A program's options, or the exit code its command line already decides: 2 after a UsageError
 * (the message, then the usage text, on stderr), 0 after --help (the usage text on stdout).
 */
export function optionsOrExit<T extends object>(name: string, usage: string, parse: () => T | "help"): T | number {
  let parsed;
  try {
    parsed = parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${name}: ${e.message}\n${usage}\n`);
    return 2;
  }
  if (parsed === "help") {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  return parsed;
}
