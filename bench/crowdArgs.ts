/** The command line of bench/crowd.ts, checked before anything starts. Pure. */
import { parseArgs } from "node:util";

export const CROWD_USAGE = `usage: npx tsx bench/crowd.ts [--threads 2,4] [--addresses N] [--calls N] [--interval-ms N] [--max-body-kib N]
What another client's calls take while many addresses attack the gateway at once (issue 51): each
address holds WebSockets with an unfinished message, HTTP/2 streams with slow bodies and
connections that never read (devtools/crowd.js), reopening what the gateway closes. For each
thread count (what production gives HAProxy on a tier of that many cores), the other client's
p50, p99 and max beside the machine's load, then whether HAProxy is idle again once the crowd is gone.
  --threads 2,4      HAProxy threads, one gateway each in turn (2: the minimum tier, 4: recommended)
  --addresses N      attacking addresses on loopback (64)
  --calls N          the other client's calls, one every --interval-ms (100)
  --interval-ms N    between the other client's calls (100)
  --max-body-kib N   gateway.maxBodyKiB, which sizes every buffer of HAProxy's pool (1024, the default)
  --help             this text`;

export interface CrowdArgs {
  readonly threads: readonly number[];
  readonly addresses: number;
  readonly calls: number;
  readonly intervalMs: number;
  readonly maxBodyKiB: number;
}

const positive = (name: string, v: string, max: number): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0 || n > max) throw new Error(`--${name} must be a whole number from 1 to ${max} (got "${v}")`);
  return n;
};

export function parseCrowdArgs(argv: readonly string[]): CrowdArgs | "help" | { readonly error: string } {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        threads: { type: "string", default: "2,4" },
        addresses: { type: "string", default: "64" },
        calls: { type: "string", default: "100" },
        "interval-ms": { type: "string", default: "100" },
        "max-body-kib": { type: "string", default: "1024" },
        help: { type: "boolean" },
      },
    });
    if (values.help) return "help";
    const threads = values.threads!.split(",").map((t) => positive("threads", t.trim(), 64));
    // Loopback addresses 127.0.1.10 and up, 200 to a /24 (devtools/crowd.js).
    return { threads, addresses: positive("addresses", values.addresses!, 1000), calls: positive("calls", values.calls!, 100_000), intervalMs: positive("interval-ms", values["interval-ms"]!, 60_000), maxBodyKiB: positive("max-body-kib", values["max-body-kib"]!, 16_384) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
