/**
 * `npm run bench`'s options. bench/run.sh hands the same arguments to bench/run.ts and to
 * bench/cache.ts, so both read this one list, each using its own; run.sh checks them first
 * (`tsx bench/args.ts ARGS`), before anything is installed or started.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";

export const BENCH_USAGE = `usage: npm run bench -- [options]
  --seconds N          HTTP measurement per case and round (8)
  --ws-seconds N       WebSocket measurement per case and round (5)
  --cache-seconds N    the response cache's read mix, per case and round (8)
  --rounds N           rounds, the cases alternating within each (2)
  --connections N      wrk's connections (32)
  --threads N          proxy threads or workers (1)
  --variant JSON       a second gateway with the generated config edited: [["search","replace"],...]
  --baseline NAME=DIR  the gateway builder of another checkout (DIR/gateway/build.ts), as its own case; repeatable
  --cases LIST         only these cases, comma-separated (gateway, variant, nginx, caddy, ...)
  --out DIR            where latest.json and latest.svg go (bench/results)
  --help               this text`;

const COUNTS = ["seconds", "ws-seconds", "cache-seconds", "rounds", "connections", "threads"] as const;

export type BenchArgs = Record<(typeof COUNTS)[number], number> & {
  readonly variant?: [string, string][];
  readonly baseline: readonly { readonly name: string; readonly dir: string }[];
  readonly cases?: readonly string[];
  readonly out: string;
};

/** The options, or a message saying what is wrong with them; "help" for --help. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs | "help" | { readonly error: string } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        ...Object.fromEntries(COUNTS.map((c) => [c, { type: "string" as const }])),
        variant: { type: "string" },
        baseline: { type: "string", multiple: true },
        cases: { type: "string" },
        out: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    const unknown = /Unknown option '([^']+)'/.exec((e as Error).message);
    return { error: unknown ? `unknown option ${unknown[1]}` : (e as Error).message };
  }
  if (values.help) return "help";
  const defaults = { seconds: 8, "ws-seconds": 5, "cache-seconds": 8, rounds: 2, connections: 32, threads: 1 };
  const counts = {} as Record<(typeof COUNTS)[number], number>;
  for (const c of COUNTS) {
    const v = (values as Record<string, unknown>)[c] as string | undefined;
    const n = v === undefined ? defaults[c] : Number(v);
    if (!Number.isFinite(n) || n <= 0 || (c !== "seconds" && c !== "ws-seconds" && c !== "cache-seconds" && !Number.isInteger(n))) {
      return { error: `--${c} must be a positive ${c.endsWith("seconds") ? "number" : "integer"} (got "${v}")` };
    }
    counts[c] = n;
  }
  let variant: [string, string][] | undefined;
  if (values.variant !== undefined) {
    try {
      variant = JSON.parse(values.variant as string);
    } catch {
      variant = undefined;
    }
    if (!Array.isArray(variant) || !variant.every((p) => Array.isArray(p) && p.length === 2 && p.every((s) => typeof s === "string"))) {
      return { error: `--variant must be a JSON list of ["search","replace"] pairs (got ${JSON.stringify(values.variant)})` };
    }
  }
  const baseline = [];
  for (const spec of (values.baseline as string[] | undefined) ?? []) {
    const [name, dir] = spec.split("=");
    if (!name || !dir) return { error: `--baseline expects NAME=DIR (got "${spec}")` };
    baseline.push({ name, dir });
  }
  return {
    ...counts,
    variant,
    baseline,
    cases: values.cases === undefined ? undefined : (values.cases as string).split(","),
    out: (values.out as string | undefined) ?? join(__dirname, "results"),
  };
}

/** The options for a bench script: --help prints the usage and exits 0, a wrong one exits 2 saying why. */
export function benchArgs(argv: readonly string[]): BenchArgs {
  const a = parseBenchArgs(argv);
  if (a === "help") {
    console.log(BENCH_USAGE);
    process.exit(0);
  }
  if ("error" in a) {
    console.error(`rpcstack bench: ${a.error}\n${BENCH_USAGE}`);
    process.exit(2);
  }
  return a;
}

if (require.main === module) benchArgs(process.argv.slice(2));
