/**
 * How the bench rounds and shows what it measured: one rule for every figure it stores or
 * prints (req/s, latencies, CPU per request, hit ratios, ratios), and the spread over rounds.
 */

/**
 * The one rounding rule: three significant digits, and whole units from 100 up (11,432 req/s,
 * 253 µs, 71.4 µs, 2.62 ms, 0.884). Floating-point sums like 71.44999999999999 never reach a table.
 */
export function fig(x: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  return Math.abs(x) >= 100 ? Math.round(x) : Number(x.toPrecision(3));
}

/** A figure as tables print it: rounded by `fig`, with thousands separators. */
export const show = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? "-" : fig(x).toLocaleString("en", { maximumFractionDigits: 20 }));

/** a over b by the rule: how many times b's figure a is. */
export const ratio = (a: number, b: number): number => fig(a / b);

export function median(xs: readonly number[]): number {
  if (!xs.length) throw new Error("median of no figures");
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  /** (max - min) / median, in percent: how far apart the rounds were. */
  readonly percent: number;
}

/** The spread of one figure over rounds, each value by the rounding rule. */
export function spread(xs: readonly number[]): Spread {
  const m = median(xs);
  const [min, max] = [Math.min(...xs), Math.max(...xs)];
  return { min: fig(min), median: fig(m), max: fig(max), percent: fig(((max - min) / m) * 100) };
}

/** "0.88 (0.77-0.98, 24%)": a median with its range over rounds. */
export const showSpread = (s: Spread): string => `${show(s.median)} (${show(s.min)}-${show(s.max)}, ${show(s.percent)}%)`;
