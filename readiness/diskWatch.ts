/**
 * rpcstack-disk: watches the data volumes (mounted read-only), serves their use as Prometheus
 * gauges on GET /metrics, and answers HAProxy's agent-check on a TCP port: "down" while a volume
 * the server's node uses is above the stop threshold, "up" otherwise.
 */
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer } from "node:net";
import { parseArgs } from "node:util";
import { agentReply, describeUse, metricsText, parseVolumeArg, verdict, volumeUse, type DiskThresholds, type VolumeUse } from "./disk.js";

const USAGE = `usage: rpcstack-disk --volume NAME=PATH [--volume ...] [options]
  --volume NAME=PATH      a data volume to watch (repeat for each)
  --warn-percent N        log a warning above this use (85)
  --stop-percent N        answer "down" to HAProxy's agent-check above this use (95)
  --metrics-port PORT     serve GET /metrics (Prometheus) here (9105)
  --agent-port PORT       answer HAProxy agent-check here (9106); the agent-send string names
                          the volumes of the server's node ("geth,lighthouse"), none: all
  --host ADDR             address to listen on (0.0.0.0)
  --interval-seconds N    between measurements (10)
  --help                  this text
Exit: 0 on SIGTERM, 2 bad arguments.`;

export interface DiskWatchOptions {
  readonly volumes: readonly { name: string; path: string }[];
  readonly thresholds: DiskThresholds;
  readonly metricsPort: number;
  readonly agentPort: number;
  readonly host: string;
  readonly intervalMs: number;
}

class UsageError extends Error {}

function int(name: string, v: string | undefined, fallback: number, min: number, max: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer ${min}-${max} (got "${v}")`);
  return n;
}

export function parseDiskCli(argv: string[]): DiskWatchOptions | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        volume: { type: "string", multiple: true },
        "warn-percent": { type: "string" },
        "stop-percent": { type: "string" },
        "metrics-port": { type: "string" },
        "agent-port": { type: "string" },
        host: { type: "string" },
        "interval-seconds": { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return "help";
  const volumes = (values.volume ?? []).map((v) => {
    const parsed = parseVolumeArg(v);
    if (!parsed) throw new UsageError(`--volume must be NAME=/path (got "${v}")`);
    return parsed;
  });
  if (!volumes.length) throw new UsageError("give at least one --volume NAME=PATH");
  const thresholds = { warnPercent: int("warn-percent", values["warn-percent"], 85, 1, 100), stopPercent: int("stop-percent", values["stop-percent"], 95, 1, 100) };
  if (thresholds.warnPercent > thresholds.stopPercent) throw new UsageError("--warn-percent must not be above --stop-percent");
  return {
    volumes,
    thresholds,
    metricsPort: int("metrics-port", values["metrics-port"], 9105, 0, 65535),
    agentPort: int("agent-port", values["agent-port"], 9106, 0, 65535),
    host: values.host ?? "0.0.0.0",
    intervalMs: int("interval-seconds", values["interval-seconds"], 10, 1, 3600) * 1000,
  };
}

export interface DiskWatch {
  readonly ports: Promise<{ metrics: number; agent: number }>;
  /** Measures now (the loop also does, every interval). */
  measure(): Promise<readonly VolumeUse[]>;
  stop(): void;
}

export function startDiskWatch(opts: DiskWatchOptions, log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): DiskWatch {
  let uses: VolumeUse[] = [];
  const said = new Map<string, string>();
  const measure = async () => {
    uses = await Promise.all(opts.volumes.map((v) => volumeUse(v.name, v.path)));
    for (const u of uses) {
      // Said once per change of verdict, not every interval.
      const v = verdict(u, opts.thresholds);
      if (said.get(u.name) !== v) log(`rpcstack-disk: ${describeUse(u, opts.thresholds)}`);
      said.set(u.name, v);
    }
    return uses;
  };
  const timer = setInterval(() => void measure().catch((e) => log(`rpcstack-disk: cannot measure: ${(e as Error).message}`)), opts.intervalMs);
  const first = measure();
  const http: Server = createHttpServer((req, res) => {
    if ((req.url ?? "").split("?")[0] !== "/metrics") return void res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(metricsText(uses, opts.thresholds));
  });
  const agent: TcpServer = createTcpServer((sock) => {
    let asked = "";
    // HAProxy writes agent-send at once on connect; without it, every volume counts.
    const answer = () => {
      clearTimeout(wait);
      const names = asked.split(/[\s,]+/).filter(Boolean);
      const mine = names.length ? uses.filter((u) => names.includes(u.name)) : uses;
      sock.end(agentReply(mine, opts.thresholds));
    };
    const wait = setTimeout(answer, 200);
    sock.on("data", (d) => ((asked += d), answer()));
    sock.on("error", () => clearTimeout(wait));
  });
  const listen = (s: Server | TcpServer, port: number) =>
    new Promise<number>((resolve) => s.listen(port, opts.host, () => resolve((s.address() as { port: number }).port)));
  const ports = first.then(async () => ({ metrics: await listen(http, opts.metricsPort), agent: await listen(agent, opts.agentPort) }));
  return {
    ports,
    measure,
    stop: () => {
      clearInterval(timer);
      http.close();
      agent.close();
    },
  };
}

export async function main(argv: string[]): Promise<number> {
  let opts;
  try {
    opts = parseDiskCli(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`rpcstack-disk: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (opts === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const w = startDiskWatch(opts);
  const p = await w.ports;
  process.stdout.write(`rpcstack-disk: /metrics on ${opts.host}:${p.metrics}, agent-check on ${opts.host}:${p.agent}\n`);
  await new Promise<void>((resolve) => {
    for (const sig of ["SIGTERM", "SIGINT"] as const) process.once(sig, () => (w.stop(), resolve()));
  });
  return 0;
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
