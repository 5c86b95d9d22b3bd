/**
 * rpcstack-ready: poll the L1 and L2 nodes until both are synced (exit 0) or the timeout passes
 * (exit 1; 3 when an endpoint never answered). With --serve PORT it keeps polling and answers
 * GET /ready/l1, /ready/l2 and /ready with 200 (synced) or 503, for the gateway's health checks.
 */
import { createServer, type Server } from "node:http";
import { parseArgs } from "node:util";
import { poll, type PollOptions, type Polled, type Target } from "./poll.js";
import { RESULT_PREFIX } from "./result.js";
import { describeState, type NodeState, type Observation } from "./syncState.js";
import { systemReason } from "../cli/errors.js";
import { numberArg, serveUntilSignal, thresholdArgs, UsageError } from "./args.js";
import { describeUse, parseVolumeArg, volumeUse, type DiskThresholds } from "./disk.js";

export { RESULT_PREFIX };

const USAGE = `usage: rpcstack-ready [--l1 URL] [--l2 URL] [options]
  --l1 URL                   execution client JSON-RPC (eth_syncing, eth_blockNumber)
  --l1-from-env NAME         read the --l1 URL from environment variable NAME (a URL with
                             credentials stays off the command line and out of the output)
  --l2 URL                   Starknet node JSON-RPC (starknet_syncing, the latest block)
  --l2-ready URL             the L2 node's own readiness endpoint (Juno /ready/sync,
                             Pathfinder /ready/synced): 200 there counts as synced
  --l1-reference URL         public L1 JSON-RPC to compare the head with
  --tolerance-blocks N       blocks behind the reference that still count as synced (6)
  --max-head-age-seconds N   how recent a head must be (L1 without a reference, and L2) (300)
  --timeout-minutes N        give up after this long (60)
  --interval-seconds N       between polls (10); doubles per failed poll up to 60
  --disk NAME=PATH           a data volume to report on (repeat); a warning above
                             --disk-warn-percent (85), naming --disk-stop-percent (95),
                             where the gateway stops routing to the volume's node
  --report-only              poll once, print the states, exit 0
  --serve PORT               keep polling and serve /ready/l1, /ready/l2, /ready
  --serve-host ADDR          address to serve on (0.0.0.0)
  --help                     this text
Exit: 0 synced (or reported), 1 timed out, 2 bad arguments, 3 an endpoint never answered.`;

export interface CliOptions {
  readonly targets: readonly Target[];
  readonly poll: PollOptions;
  readonly timeoutMs: number;
  readonly intervalMs: number;
  readonly reportOnly: boolean;
  readonly serve?: { readonly port: number; readonly host: string };
  readonly disks: readonly { readonly name: string; readonly path: string }[];
  readonly diskThresholds: DiskThresholds;
}

class HelpRequested extends Error {}

const num = (name: string, v: string | undefined, fallback: number, min: number) => numberArg(name, v, fallback, { min });

function url(name: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!/^https?:\/\/[^\s/]+/.test(v)) throw new UsageError(`--${name} must be an http:// or https:// URL (got "${v}")`);
  return v;
}

// Never echoes the value: it may carry credentials.
function fromEnv(name: string, also: string | undefined): string {
  if (also !== undefined) throw new UsageError("give --l1 or --l1-from-env, not both");
  const v = process.env[name];
  if (!v) throw new UsageError(`--l1-from-env: environment variable ${name} is not set`);
  if (!/^https?:\/\/[^\s/]+/.test(v)) throw new UsageError(`--l1-from-env: ${name} must hold an http:// or https:// URL`);
  return v;
}

export function parseCli(argv: string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        l1: { type: "string" },
        "l1-from-env": { type: "string" },
        l2: { type: "string" },
        "l2-ready": { type: "string" },
        help: { type: "boolean" },
        "l1-reference": { type: "string" },
        "tolerance-blocks": { type: "string" },
        "max-head-age-seconds": { type: "string" },
        "timeout-minutes": { type: "string" },
        "interval-seconds": { type: "string" },
        "report-only": { type: "boolean" },
        disk: { type: "string", multiple: true },
        "disk-warn-percent": { type: "string" },
        "disk-stop-percent": { type: "string" },
        serve: { type: "string" },
        "serve-host": { type: "string" },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) throw new HelpRequested();
  const disk = thresholdArgs("disk-warn-percent", values["disk-warn-percent"], "disk-stop-percent", values["disk-stop-percent"]);
  const targets: Target[] = [];
  const l1 = values["l1-from-env"] === undefined ? url("l1", values.l1) : fromEnv(values["l1-from-env"], values.l1);
  const l2 = url("l2", values.l2);
  const l2Ready = url("l2-ready", values["l2-ready"]);
  if (l2Ready && !l2) throw new UsageError("--l2-ready goes with --l2");
  if (l1) targets.push({ label: "l1", url: l1 });
  if (l2) targets.push({ label: "l2", url: l2, ...(l2Ready ? { readyUrl: l2Ready } : {}) });
  if (!targets.length) throw new UsageError("give --l1 URL, --l2 URL or both");
  return {
    targets,
    poll: {
      l1ReferenceUrl: url("l1-reference", values["l1-reference"]),
      toleranceBlocks: num("tolerance-blocks", values["tolerance-blocks"], 6, 0),
      maxHeadAgeSeconds: num("max-head-age-seconds", values["max-head-age-seconds"], 300, 1),
    },
    timeoutMs: num("timeout-minutes", values["timeout-minutes"], 60, 0) * 60_000,
    intervalMs: num("interval-seconds", values["interval-seconds"], 10, 0.05) * 1000,
    reportOnly: values["report-only"] ?? false,
    serve: values.serve === undefined ? undefined : { port: numberArg("serve", values.serve, 0, { min: 1, max: 65535, integer: true }), host: values["serve-host"] ?? "0.0.0.0" },
    disks: (values.disk ?? []).map((d) => parseVolumeArg(d) ?? badDisk(d)),
    diskThresholds: disk,
  };
}

function badDisk(v: string): never {
  throw new UsageError(`--disk must be NAME=/path (got "${v}")`);
}

/** One line per data volume; "warning:" above the warn threshold, naming the gateway's stop threshold. */
async function reportDisks(opts: CliOptions, out: NodeJS.WritableStream): Promise<void> {
  for (const d of opts.disks) {
    const line = await volumeUse(d.name, d.path).then(
      (u) => describeUse(u, opts.diskThresholds),
      (e) => `volume ${d.name}: cannot measure ${d.path} (${systemReason(e)})`,
    );
    out.write(`rpcstack-ready: ${line}\n`);
  }
}

type States = Partial<Record<Target["label"], NodeState>>;

/** Polls every target once, carrying observations for rates. */
class Poller {
  readonly states: States = {};
  readonly unreachable = new Set<string>();
  private readonly seen = new Map<string, Observation>();
  private failures = 0;

  constructor(private readonly opts: CliOptions) {}

  async round(): Promise<void> {
    const results = await Promise.all(this.opts.targets.map((t) => poll(t, this.opts.poll, this.seen.get(t.label)).then((r) => [t, r] as const)));
    let failed = false;
    for (const [t, r] of results) this.record(t, r) || (failed = true);
    this.failures = failed ? this.failures + 1 : 0;
  }

  private record(t: Target, r: Polled): boolean {
    this.states[t.label] = r.state;
    if (r.unreachable) this.unreachable.add(t.label);
    else this.unreachable.delete(t.label);
    if (r.state.progress) this.seen.set(t.label, { atMs: Date.now(), current: r.state.progress.current });
    return r.state.status !== "unknown";
  }

  /** Backoff after failed polls: interval x 2^failures, at most 60 s (never below the interval). */
  nextDelayMs(): number {
    return Math.max(this.opts.intervalMs, Math.min(this.opts.intervalMs * 2 ** this.failures, 60_000));
  }

  allSynced(): boolean {
    return this.opts.targets.every((t) => this.states[t.label]?.status === "synced");
  }
}

interface Display {
  update(states: States): void;
  stop(): void;
}

function plainDisplay(out: NodeJS.WritableStream, targets: readonly Target[]): Display {
  return {
    update(states) {
      const line = targets.map((t) => describeState(t.label, states[t.label] ?? { status: "unknown", reason: "not polled yet" })).join("  ||  ");
      out.write(`[${new Date().toISOString()}] ${line}\n`);
    },
    stop() {},
  };
}

function barDisplay(targets: readonly Target[]): Display {
  // Only a terminal gets bars; the in-container run has no TTY and no node_modules.
  const { MultiBar, Presets } = require("cli-progress") as typeof import("cli-progress");
  const multi = new MultiBar({ format: " {label} [{bar}] {percentage}% | {value}/{total} | {reason}", hideCursor: true, clearOnComplete: false }, Presets.shades_classic);
  const bars = new Map(targets.map((t) => [t.label, multi.create(1, 0, { label: t.label, reason: "starting" })]));
  return {
    update(states) {
      for (const t of targets) {
        const st = states[t.label];
        const p = st?.progress;
        bars.get(t.label)!.setTotal(Math.max(p?.highest ?? 1, 1));
        bars.get(t.label)!.update(st?.status === "synced" ? Math.max(p?.highest ?? 1, 1) : (p?.current ?? 0), { reason: st ? `${st.status}: ${st.reason}` : "" });
      }
    },
    stop: () => multi.stop(),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runWait(opts: CliOptions, out: NodeJS.WritableStream = process.stdout, isTty = Boolean((out as any).isTTY)): Promise<number> {
  const poller = new Poller(opts);
  const display = isTty ? barDisplay(opts.targets) : plainDisplay(out, opts.targets);
  const deadline = Date.now() + opts.timeoutMs;
  try {
    for (;;) {
      await poller.round();
      display.update(poller.states);
      if (opts.reportOnly || poller.allSynced()) break;
      if (Date.now() >= deadline) {
        display.stop();
        const last = opts.targets.map((t) => describeState(t.label, poller.states[t.label]!)).join("; ");
        const never = [...poller.unreachable];
        out.write(
          never.length
            ? `rpcstack-ready: gave up after ${opts.timeoutMs / 60_000} min: ${never.join(" and ")} unreachable. Last state: ${last}\n`
            : `rpcstack-ready: timed out after ${opts.timeoutMs / 60_000} min before the nodes were synced. Last state: ${last}\n`,
        );
        out.write(`${RESULT_PREFIX}${JSON.stringify({ synced: false, ...poller.states })}\n`);
        return never.length ? 3 : 1;
      }
      await sleep(Math.min(poller.nextDelayMs(), Math.max(deadline - Date.now(), 0)));
    }
  } finally {
    display.stop();
  }
  const synced = poller.allSynced();
  await reportDisks(opts, out);
  out.write(`${opts.reportOnly ? "rpcstack-ready: report" : "rpcstack-ready: synced"}: ${opts.targets.map((t) => describeState(t.label, poller.states[t.label]!)).join("; ")}\n`);
  out.write(`${RESULT_PREFIX}${JSON.stringify({ synced, ...poller.states })}\n`);
  return 0;
}

/** Long-running health mode for the gateway: 200 while synced, 503 with the reason otherwise. */
export function serveHealth(opts: CliOptions): { server: Server; stop: () => void; ready: Promise<number> } {
  const poller = new Poller(opts);
  let stopped = false;
  (async () => {
    while (!stopped) {
      await poller.round();
      await sleep(poller.nextDelayMs());
    }
  })();
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const wanted = path === "/ready" ? opts.targets.map((t) => t.label) : path === "/ready/l1" ? ["l1"] : path === "/ready/l2" ? ["l2"] : undefined;
    const known = wanted?.filter((l) => opts.targets.some((t) => t.label === l));
    if (!known?.length) {
      res.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ error: `no such check: ${path}` }));
      return;
    }
    const states = Object.fromEntries(known.map((l) => [l, poller.states[l as Target["label"]] ?? { status: "unknown", reason: "not polled yet" }]));
    const ok = Object.values(states).every((s) => s.status === "synced");
    res.writeHead(ok ? 200 : 503, { "Content-Type": "application/json" }).end(JSON.stringify(states));
  });
  const ready = new Promise<number>((resolve, reject) => {
    server.once("error", (e) => reject(new UsageError(`cannot serve on ${opts.serve!.host}:${opts.serve!.port} (--serve, --serve-host): ${systemReason(e)}`)));
    server.listen(opts.serve!.port, opts.serve!.host, () => resolve((server.address() as { port: number }).port));
  });
  return {
    server,
    ready,
    stop: () => {
      stopped = true;
      server.close();
    },
  };
}

export async function main(argv: string[]): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseCli(argv);
  } catch (e) {
    if (e instanceof HelpRequested) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`rpcstack-ready: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (opts.serve) {
    const host = opts.serve.host;
    return serveUntilSignal("rpcstack-ready", serveHealth(opts), (port) => `serving /ready/l1, /ready/l2, /ready on ${host}:${port}`);
  }
  return runWait(opts);
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
