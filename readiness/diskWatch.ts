/**
 * rpcstack-disk: watches the data volumes (mounted read-only), serves their use as Prometheus
 * gauges on GET /metrics, and answers the gateway's health check for each node on
 * GET /check/<name>: 503 while a volume the node writes is being restored from a snapshot or is
 * above the stop threshold, else the status of the node's own health URL, asked there and then (so
 * a dead node is seen as fast as before). A 503's body is a JSON-RPC style error saying why (the
 * gateway relays it as its own 503 for the chain), with how far a restore is.
 */
import { createServer, type Server } from "node:http";
import { parseArgs } from "node:util";
import { systemReason } from "../kit/errors.js";
import { numberArg, optionsOrExit, UsageError } from "../kit/args.js";
import { serveUntilSignal } from "../kit/serve.js";
import { describeUse, metricsText, parseCheckArg, parseVolumeArg, thresholdArgs, verdict, type DiskThresholds } from "./disk.js";
import { volumeUse, type VolumeUse } from "../volumes/space.js";
import { describeProgress, readProgress, type RestoreProgress } from "../volumes/restoreStatus.js";
import { errorBody } from "../gateway/errors.js";

const USAGE = `usage: rpcstack-disk --volume NAME=PATH [--volume ...] [--check ...] [options]
  --volume NAME=PATH         a data volume to watch (repeat for each)
  --check NAME:VOLS=URL      answer GET /check/NAME: 503 while one of VOLS (comma-separated)
                             is above --stop-percent, else URL's own status (repeat)
  --warn-percent N           log a warning above this use (85)
  --stop-percent N           fail the checks above this use (95)
  --port PORT                serve /metrics and /check/NAME here (9105)
  --host ADDR                address to listen on (0.0.0.0)
  --interval-seconds N       between measurements (10)
  --help                     this text
Exit: 0 on SIGTERM, 2 bad arguments.`;

export interface HealthGate {
  readonly name: string;
  readonly volumes: readonly string[];
  readonly url: string;
}

export interface DiskWatchOptions {
  readonly volumes: readonly { name: string; path: string }[];
  readonly checks: readonly HealthGate[];
  readonly thresholds: DiskThresholds;
  readonly port: number;
  readonly host: string;
  readonly intervalMs: number;
}

export function parseDiskCli(argv: string[]): DiskWatchOptions | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        volume: { type: "string", multiple: true },
        check: { type: "string", multiple: true },
        "warn-percent": { type: "string" },
        "stop-percent": { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        "interval-seconds": { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return "help";
  const volumes = (values.volume ?? []).map((v) => parseVolumeArg(v) ?? bad("--volume must be NAME=/path", v));
  if (!volumes.length) throw new UsageError("give at least one --volume NAME=PATH");
  const checks = (values.check ?? []).map((v) => parseCheckArg(v) ?? bad("--check must be NAME:VOLUME[,VOLUME]=http://...", v));
  for (const c of checks) {
    const unknown = c.volumes.filter((n) => !volumes.some((v) => v.name === n));
    if (unknown.length) throw new UsageError(`--check ${c.name}: no --volume named ${unknown.join(", ")}`);
  }
  const thresholds = thresholdArgs("warn-percent", values["warn-percent"], "stop-percent", values["stop-percent"]);
  return {
    volumes,
    checks,
    thresholds,
    port: numberArg("port", values.port, 9105, { min: 0, max: 65535, integer: true }),
    host: values.host ?? "0.0.0.0",
    intervalMs: numberArg("interval-seconds", values["interval-seconds"], 10, { min: 1, max: 3600, integer: true }) * 1000,
  };
}

function bad(what: string, v: string): never {
  throw new UsageError(`${what} (got "${v}")`);
}

export interface DiskWatch {
  readonly port: Promise<number>;
  /** Measures now (the loop also does, every interval). */
  measure(): Promise<readonly VolumeUse[]>;
  stop(): void;
}

const json = (status: number, body: unknown) => [status, { "Content-Type": "application/json" }, JSON.stringify(body)] as const;
/** The gateway's 503 code (gateway/errors.ts), the words saying why, and the details under `data`. */
const out = (message: string, data: Record<string, unknown>) => {
  const body = JSON.parse(errorBody(-32053, message));
  return [503, { "Content-Type": "application/json" }, JSON.stringify({ ...body, error: { ...body.error, data } })] as const;
};

export function startDiskWatch(opts: DiskWatchOptions, log: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): DiskWatch {
  let uses: VolumeUse[] = [];
  let restores = new Map<string, RestoreProgress>();
  const said = new Map<string, string>();
  const measure = async () => {
    uses = await Promise.all(opts.volumes.map((v) => volumeUse(v.name, v.path).catch((e) => {
      throw new UsageError(`volume ${v.name}: cannot measure ${v.path} (--volume): ${systemReason(e)}`);
    })));
    const found = await Promise.all(opts.volumes.map(async (v) => [v.name, await readProgress(v.path)] as const));
    restores = new Map(found.filter((f): f is [string, RestoreProgress] => f[1] !== undefined));
    for (const u of uses) {
      // Said once per change of verdict, not every interval.
      const v = verdict(u, opts.thresholds);
      if (said.get(u.name) !== v) log(`rpcstack-disk: ${describeUse(u, opts.thresholds)}`);
      said.set(u.name, v);
    }
    return uses;
  };
  const timer = setInterval(() => void measure().catch((e) => log(`rpcstack-disk: cannot measure: ${(e as Error).message}`)), opts.intervalMs);

  const check = async (gate: HealthGate) => {
    // Read now, not at the last measure: a restore that just ended must not keep the route shut.
    const restoring = (await Promise.all(opts.volumes.filter((v) => gate.volumes.includes(v.name)).map(async (v) => [v.name, await readProgress(v.path)] as const))).find((r) => r[1]);
    if (restoring) {
      const [name, p] = restoring as [string, RestoreProgress];
      return out(`node unavailable: restoring its database from a snapshot: ${describeProgress(p)}`, { status: "restoring", volume: name, restore: p });
    }
    const full = uses.filter((u) => gate.volumes.includes(u.name) && verdict(u, opts.thresholds) === "full");
    if (full.length) {
      const volumes = full.map((u) => ({ name: u.name, usedPercent: Number(u.usedPercent.toFixed(1)) }));
      return out(`node unavailable: its data volume is full (${volumes.map((v) => `${v.name} ${v.usedPercent}%`).join(", ")})`, { status: "disk full", volumes });
    }
    const status = await fetch(gate.url, { signal: AbortSignal.timeout(3000) }).then(
      async (r) => (await r.arrayBuffer().catch(() => undefined), r.status),
      () => 503,
    );
    if (status === 200) return json(200, { status: "ok", nodeStatus: status });
    return out(`node unavailable or not synced (its readiness check answered ${status})`, { status: "node not ready", nodeStatus: status });
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path === "/metrics") return void res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(metricsText(uses, opts.thresholds) + restoreMetricsText(opts.volumes.map((v) => v.name), restores));
    const gate = opts.checks.find((c) => path === `/check/${c.name}`);
    const answer = gate ? check(gate) : Promise.resolve(json(404, { error: `no such check: ${path}` }));
    void answer.then(([status, headers, body]) => res.writeHead(status, headers).end(body));
  });
  // A volume that cannot be measured or an address that cannot be served is a bad argument: said at start.
  const port = measure().then(() => new Promise<number>((resolve, reject) => {
    server.once("error", (e) => reject(new UsageError(`cannot serve on ${opts.host}:${opts.port} (--host, --port): ${systemReason(e)}`)));
    server.listen(opts.port, opts.host, () => resolve((server.address() as { port: number }).port));
  }));
  return {
    port,
    measure,
    stop: () => {
      clearInterval(timer);
      server.close();
    },
  };
}

/** Prometheus gauges of restores from a snapshot, per volume (0 where none runs). */
export function restoreMetricsText(volumes: readonly string[], restores: ReadonlyMap<string, RestoreProgress>): string {
  const gauge = (name: string, help: string, value: (p: RestoreProgress) => number | undefined) => [
    `# HELP ${name} ${help}`,
    `# TYPE ${name} gauge`,
    ...volumes.map((v) => [v, restores.get(v)] as const).flatMap(([v, p]) => {
      const n = p ? value(p) : 0;
      return n === undefined ? [] : [`${name}{volume="${v}"} ${n}`];
    }),
  ];
  const lines = [
    ...gauge("rpcstack_restore_running", "1 while the volume is being restored from a snapshot (its node is held back, the gateway answers 503).", () => 1),
    ...gauge("rpcstack_restore_downloaded_bytes", "Archive bytes the running restore has received.", (p) => p.doneBytes),
    ...gauge("rpcstack_restore_archive_bytes", "The archive's size, when the server said it.", (p) => p.totalBytes),
    ...gauge("rpcstack_restore_written_bytes", "Bytes the running restore has written to the volume.", (p) => p.unpackedBytes),
    ...gauge("rpcstack_restore_bytes_per_second", "The running restore's download rate.", (p) => p.bytesPerSecond),
    ...gauge("rpcstack_restore_eta_seconds", "Seconds the running restore needs at its rate.", (p) => p.etaSeconds),
  ];
  return `${lines.join("\n")}\n`;
}

export async function main(argv: string[]): Promise<number> {
  const opts = optionsOrExit("rpcstack-disk", USAGE, () => parseDiskCli(argv));
  if (typeof opts === "number") return opts;
  const w = startDiskWatch(opts);
  const checks = opts.checks.map((c) => c.name).join(",");
  const host = opts.host;
  return serveUntilSignal("rpcstack-disk", { ready: w.port, stop: w.stop }, (port) => `/metrics and /check/{${checks}} on ${host}:${port}`);
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
