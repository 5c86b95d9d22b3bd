/**
 * `npm run bench`'s options. bench/run.sh hands the same arguments to bench/run.ts and to
 * bench/cache.ts (with `--cases peers`, to bench/peers.ts; with `--cases all`, to all three and then
 * bench/summary.ts), so all of them read this one list,
 * each using its own; run.sh checks them first (`tsx bench/args.ts ARGS`), before anything is
 * installed or started.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";

export const BENCH_USAGE = `usage: npm run bench -- [options]
  --seconds N          HTTP measurement per case and round (6)
  --ws-seconds N       WebSocket measurement per case and round (5)
  --cache-seconds N    the response cache's read mix, per case and round (6)
  --miss-connections N the cache bench's concurrent misses of ~1 MiB answers, for its memory (64)
  --miss-seconds N     how long those misses run, with the cache and without (5)
  --small-miss-seconds N  the same connections' misses of small answers, the cache warm (10)
  --merge-seconds N    each merge case (the relay mix on a moving head, 32 and 64 clients), per client count (6)
  --rounds N           rounds, the cases alternating within each (2)
  --restore-mb N       the restore bench's stand-in database in MB (600; bench/restore.ts, run on its own)
  --connections N      wrk's connections (32)
  --block-seconds N    the bench chain's new head every N s (geth --dev.period; 12, mainnet's slot)
  --threads N          proxy threads or workers (1)
  --variant JSON       a second gateway with the generated config edited: [["search","replace"],...]
  --baseline NAME=DIR  the gateway builder of another checkout (DIR/gateway/build.ts), as its own case; repeatable
  --cases LIST         only these cases, comma-separated (gateway, variant, nginx, caddy, badge-key, badge, ...)
  --cases peers        the gateway against eRPC and proxyd instead (bench/peers.ts; its options: --cases peers --help)
  --cases merge        identical reads merged on a moving head instead (bench/merge.ts)
  --cases hit          a cache hit against a native return and a relay of the same bytes instead (bench/hit.ts)
  --cases instructions instructions per request under callgrind instead: the relay against nginx, the hit's steps
                       (bench/instructions.ts; there --seconds defaults to 3 and --connections to 8)
  --cases all          every part in one run into one latest.json: the relay, the hit, the cache, the peers
                       (RPCSTACK_BENCH_ERPC and RPCSTACK_BENCH_PROXYD name their binaries), the merge,
                       the instructions, then the summary
  --pin CPUS           taskset CPU list for wrk (e.g. 1): the load tool keeps a core of its own
  --out DIR            where latest.json and latest.svg go (bench/results)
  --help               this text`;

const COUNTS = ["seconds", "ws-seconds", "cache-seconds", "miss-connections", "miss-seconds", "small-miss-seconds", "merge-seconds", "rounds", "restore-mb", "connections", "threads", "block-seconds"] as const;

export type BenchArgs = Record<(typeof COUNTS)[number], number> & {
  readonly variant?: [string, string][];
  readonly baseline: readonly { readonly name: string; readonly dir: string }[];
  readonly cases?: readonly string[];
  /** `--cases all`: every case of every part (cases is then unset). */
  readonly all: boolean;
  readonly pin?: string;
  readonly out: string;
};

// Short enough that `--cases all` ends within 15 minutes on 2 cores (docs/benchmark.md has each run's
// parts and times); the figures are medians over rounds, each of tens of thousands of calls.
export const BENCH_DEFAULTS: Record<(typeof COUNTS)[number], number> = { seconds: 6, "ws-seconds": 5, "cache-seconds": 6, "miss-connections": 64, "miss-seconds": 5, "small-miss-seconds": 10, "merge-seconds": 6, rounds: 2, "restore-mb": 600, connections: 32, threads: 1, "block-seconds": 12 };

/** The options, or a message saying what is wrong with them; "help" for --help. A script may have its own defaults. */
export function parseBenchArgs(argv: readonly string[], defaults = BENCH_DEFAULTS): BenchArgs | "help" | { readonly error: string } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        ...Object.fromEntries(COUNTS.map((c) => [c, { type: "string" as const }])),
        variant: { type: "string" },
        baseline: { type: "string", multiple: true },
        cases: { type: "string" },
        pin: { type: "string" },
        out: { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    const unknown = /Unknown option '([^']+)'/.exec((e as Error).message);
    return { error: unknown ? `unknown option ${unknown[1]}` : (e as Error).message };
  }
  if (values.help) return "help";
  const counts = {} as Record<(typeof COUNTS)[number], number>;
  for (const c of COUNTS) {
    const v = (values as Record<string, unknown>)[c] as string | undefined;
    const n = v === undefined ? defaults[c] : Number(v);
    // wrk takes whole seconds (-d), so only the WebSocket length (driven here) may be a fraction.
    if (!Number.isFinite(n) || n <= 0 || (c !== "ws-seconds" && !Number.isInteger(n))) {
      return { error: `--${c} must be a positive ${c === "ws-seconds" ? "number" : "integer"} (got "${v}")` };
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
  const cases = values.cases === undefined ? undefined : (values.cases as string).split(",");
  const all = cases?.includes("all") ?? false;
  if (all && cases!.length > 1) return { error: `--cases all runs every case of every part; it takes no other case (got "${values.cases}")` };
  return {
    ...counts,
    variant,
    baseline,
    cases: all ? undefined : cases,
    all,
    pin: values.pin as string | undefined,
    out: (values.out as string | undefined) ?? join(__dirname, "results"),
  };
}

/** The options for a bench script: --help prints the usage and exits 0, a wrong one exits 2 saying why. */
export function benchArgs(argv: readonly string[], usage = BENCH_USAGE, defaults = BENCH_DEFAULTS): BenchArgs {
  const a = parseBenchArgs(argv, defaults);
  if (a === "help") {
    console.log(usage);
    process.exit(0);
  }
  if ("error" in a) {
    console.error(`rpcstack bench: ${a.error}\n${usage}`);
    process.exit(2);
  }
  return a;
}

if (require.main === module) benchArgs(process.argv.slice(2));
