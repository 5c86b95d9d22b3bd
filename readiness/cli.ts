/**
 * rpcstack-ready: poll the L1 and L2 nodes until both are synced (exit 0) or the timeout passes
 * (exit 1; 3 when an endpoint never answered). With --serve PORT it keeps polling and answers
 * GET /ready/l1, /ready/l2 and /ready with 200 (synced) or 503, for the gateway's health checks;
 * with several nodes per layer also GET /ready/<layer>/<node> (in rotation: rotation.ts) and
 * GET /metrics. With --await LAYER/NODE it waits until that node is in rotation (a rolling
 * upgrade's step).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { parseArgs } from "node:util";
import { poll, type PollOptions, type Polled, type Target } from "./poll.js";
import { RESULT_PREFIX } from "./result.js";
import { type NodeState, type Observation } from "./syncState.js";
import { rotationMetrics, type RotationRules } from "./rotation.js";
import { NodeWatch, nodeKey } from "./watch.js";
import { barDisplay, describeAll, plainDisplay, shownAs } from "./display.js";
import { systemReason } from "../cli/errors.js";
import { numberArg, serveUntilSignal, thresholdArgs, UsageError } from "./args.js";
import { describeUse, parseVolumeArg, volumeUse, type DiskThresholds } from "./disk.js";

export { RESULT_PREFIX };

const USAGE = `usage: rpcstack-ready [--l1 URL] [--l2 URL] [options]
  --l1 [NODE=]URL            execution client JSON-RPC (eth_syncing, eth_blockNumber); repeat
                             for each node of the layer (NODE: its name, else the URL's host)
  --l1-from-env NAME         read the --l1 URL from environment variable NAME (a URL with
                             credentials stays off the command line and out of the output)
  --l2 [NODE=]URL            Starknet node JSON-RPC (starknet_syncing, the latest block); repeat
  --l2-ready [NODE=]URL      the L2 node's own readiness endpoint (Juno /ready/sync,
                             Pathfinder /ready/synced): 200 there counts as synced
  --l1-chain-id ID           the chain id every L1 node must answer (eth_chainId); a node on
                             another chain is out of rotation
  --l2-chain-id ID           likewise for L2 (starknet_chainId)
  --chain-name LAYER=PATH    the gateway path a layer is served at, for the metrics' labels
  --await LAYER/NODE         wait until that node is in rotation (synced, within the tolerance
                             of the best head among its layer's nodes) for --hold-seconds, or
                             until no other node of its layer is (nothing serves to protect)
  --hold-seconds N           how long the awaited node must stay in rotation (10)
  --l1-reference URL         public L1 JSON-RPC to compare the head with
  --tolerance-blocks N       blocks behind the reference that still count as synced (6)
  --max-head-age-seconds N   how recent a head must be (L1 without a reference, and L2) (300)
  --timeout-minutes N        give up after this long (60)
  --interval-seconds N       between polls (10); doubles per failed poll up to 60
  --disk NAME=PATH           a data volume to report on (repeat); a warning above
                             --disk-warn-percent (85), naming --disk-stop-percent (95),
                             where the gateway stops routing to the volume's node
  --report-only              poll once, print the states, exit 0
  --serve PORT               keep polling and serve /ready/l1, /ready/l2, /ready,
                             /ready/<layer>/<node> and /metrics
  --serve-host ADDR          address to serve on (0.0.0.0)
  --help                     this text
Exit: 0 synced (or reported), 1 timed out, 2 bad arguments, 3 an endpoint never answered.`;

export interface CliOptions {
  readonly targets: readonly Target[];
  readonly poll: PollOptions;
  readonly rules: RotationRules;
  /** The gateway path of each layer, for metric labels. */
  readonly chainNames: Partial<Record<"l1" | "l2", string>>;
  /** --await: the node a rolling upgrade waits for, and how long it must stay in rotation. */
  readonly await?: { readonly layer: "l1" | "l2"; readonly node: string; readonly holdMs: number };
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
function fromEnv(name: string, also: readonly string[] | undefined): string {
  if (also?.length) throw new UsageError("give --l1 or --l1-from-env, not both");
  const v = process.env[name];
  if (!v) throw new UsageError(`--l1-from-env: environment variable ${name} is not set`);
  if (!/^https?:\/\/[^\s/]+/.test(v)) throw new UsageError(`--l1-from-env: ${name} must hold an http:// or https:// URL`);
  return v;
}

/** `NODE=URL` or `URL` (named by its host). */
function namedUrl(flag: string, v: string): { node: string; url: string } {
  const m = /^([a-z0-9][a-z0-9-]*)=(.*)$/.exec(v);
  const u = url(flag, m ? m[2] : v)!;
  return { node: m ? m[1] : new URL(u).hostname, url: u };
}

function layerTargets(label: "l1" | "l2", urls: readonly string[], ready: readonly string[] = []): Target[] {
  const nodes = urls.map((v) => namedUrl(label, v));
  const names = nodes.map((n) => n.node);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new UsageError(`--${label}: two nodes are named "${twice}"; name each one (--${label} NODE=URL)`);
  const readyUrls = new Map(ready.map((v) => namedUrl(`${label}-ready`, v)).map((r, i) => [/^[a-z0-9][a-z0-9-]*=/.test(ready[i]) ? r.node : names[0], r.url]));
  for (const n of readyUrls.keys()) if (!names.includes(n)) throw new UsageError(`--${label}-ready names node "${n}", which no --${label} does`);
  return nodes.map((n) => ({ label, url: n.url, node: n.node, ...(readyUrls.has(n.node) ? { readyUrl: readyUrls.get(n.node) } : {}) }));
}

function awaitArg(v: string | undefined, targets: readonly Target[], hold: string | undefined): CliOptions["await"] {
  if (v === undefined) return undefined;
  const m = /^(l1|l2)\/([a-z0-9][a-z0-9-]*)$/.exec(v);
  if (!m) throw new UsageError(`--await must be LAYER/NODE, like l1/geth-2 (got "${v}")`);
  if (!targets.some((t) => t.label === m[1] && t.node === m[2])) throw new UsageError(`--await names ${v}, which no --${m[1]} does`);
  return { layer: m[1] as "l1" | "l2", node: m[2], holdMs: numberArg("hold-seconds", hold, 10, { min: 0 }) * 1000 };
}

function chainNames(values: readonly string[]): CliOptions["chainNames"] {
  return Object.fromEntries(
    values.map((v) => {
      const m = /^(l1|l2)=([a-z0-9-]+)$/.exec(v);
      if (!m) throw new UsageError(`--chain-name must be LAYER=PATH, like l1=eth (got "${v}")`);
      return [m[1], m[2]];
    }),
  );
}

export function parseCli(argv: string[]): CliOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        l1: { type: "string", multiple: true },
        "l1-from-env": { type: "string" },
        l2: { type: "string", multiple: true },
        "l2-ready": { type: "string", multiple: true },
        "l1-chain-id": { type: "string" },
        "l2-chain-id": { type: "string" },
        "chain-name": { type: "string", multiple: true },
        await: { type: "string" },
        "hold-seconds": { type: "string" },
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
  const l1 = values["l1-from-env"] === undefined ? layerTargets("l1", values.l1 ?? []) : [{ label: "l1" as const, url: fromEnv(values["l1-from-env"], values.l1), node: "l1" }];
  if (values["l2-ready"]?.length && !values.l2?.length) throw new UsageError("--l2-ready goes with --l2");
  const targets: Target[] = [...l1, ...layerTargets("l2", values.l2 ?? [], values["l2-ready"] ?? [])];
  if (!targets.length) throw new UsageError("give --l1 URL, --l2 URL or both");
  const chainId = (name: string, v: string | undefined) => {
    if (v !== undefined && !/^0x[0-9a-fA-F]+$/.test(v)) throw new UsageError(`--${name} must be a hex chain id like 0xaa36a7 (got "${v}")`);
    return v;
  };
  const toleranceBlocks = num("tolerance-blocks", values["tolerance-blocks"], 6, 0);
  const ids = { l1: chainId("l1-chain-id", values["l1-chain-id"]), l2: chainId("l2-chain-id", values["l2-chain-id"]) };
  return {
    targets,
    poll: {
      l1ReferenceUrl: url("l1-reference", values["l1-reference"]),
      toleranceBlocks,
      maxHeadAgeSeconds: num("max-head-age-seconds", values["max-head-age-seconds"], 300, 1),
    },
    rules: { toleranceBlocks, chainIds: Object.fromEntries(Object.entries(ids).filter(([, v]) => v !== undefined)) },
    chainNames: chainNames(values["chain-name"] ?? []),
    await: awaitArg(values.await, targets, values["hold-seconds"]),
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

/** States by node key (l1/geth-2); a layer's only node goes by the layer's name too, as it always has. */
type States = Record<string, NodeState>;

/** What a node is called in lines and results: its layer when it is the layer's only node, else layer/node. */

/** Polls every target once, carrying observations for rates. */
class Poller {
  readonly states: States = {};
  readonly unreachable = new Set<string>();
  private readonly seen = new Map<string, Observation>();
  private failures = 0;

  constructor(private readonly opts: CliOptions) {}

  async round(): Promise<void> {
    const results = await Promise.all(this.opts.targets.map((t) => poll(t, this.opts.poll, this.seen.get(nodeKey(t))).then((r) => [t, r] as const)));
    let failed = false;
    for (const [t, r] of results) this.record(t, r) || (failed = true);
    this.failures = failed ? this.failures + 1 : 0;
  }

  private record(t: Target, r: Polled): boolean {
    const key = shownAs(this.opts.targets, t);
    this.states[key] = r.state;
    if (r.unreachable) this.unreachable.add(key);
    else this.unreachable.delete(key);
    if (r.state.progress) this.seen.set(nodeKey(t), { atMs: Date.now(), current: r.state.progress.current });
    return r.state.status !== "unknown";
  }

  /** Backoff after failed polls: interval x 2^failures, at most 60 s (never below the interval). */
  nextDelayMs(): number {
    return Math.max(this.opts.intervalMs, Math.min(this.opts.intervalMs * 2 ** this.failures, 60_000));
  }

  state(t: Target): NodeState {
    return this.states[shownAs(this.opts.targets, t)] ?? { status: "unknown", reason: "not polled yet" };
  }

  allSynced(): boolean {
    return this.opts.targets.every((t) => this.state(t).status === "synced");
  }

  /** The result line's states: each node, and each layer's first under the layer's name (what `pulumi up` reads). */
  result(): States {
    const firsts = Object.fromEntries(this.opts.targets.map((t) => [t.label, this.state(t)]).reverse());
    return { ...this.states, ...firsts };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runWait(opts: CliOptions, out: NodeJS.WritableStream = process.stdout, isTty = Boolean((out as any).isTTY)): Promise<number> {
  const poller = new Poller(opts);
  const display = isTty ? barDisplay(opts.targets) : plainDisplay(out, opts.targets);
  const deadline = Date.now() + opts.timeoutMs;
  try {
    for (;;) {
      await poller.round();
      display.update(poller);
      if (opts.reportOnly || poller.allSynced()) break;
      if (Date.now() >= deadline) {
        display.stop();
        const last = describeAll(poller, opts.targets, "; ");
        const never = [...poller.unreachable];
        out.write(
          never.length
            ? `rpcstack-ready: gave up after ${opts.timeoutMs / 60_000} min: ${never.join(" and ")} unreachable. Last state: ${last}\n`
            : `rpcstack-ready: timed out after ${opts.timeoutMs / 60_000} min before the nodes were synced. Last state: ${last}\n`,
        );
        out.write(`${RESULT_PREFIX}${JSON.stringify({ synced: false, ...poller.result() })}\n`);
        return never.length ? 3 : 1;
      }
      await sleep(Math.min(poller.nextDelayMs(), Math.max(deadline - Date.now(), 0)));
    }
  } finally {
    display.stop();
  }
  const synced = poller.allSynced();
  await reportDisks(opts, out);
  out.write(`${opts.reportOnly ? "rpcstack-ready: report" : "rpcstack-ready: synced"}: ${describeAll(poller, opts.targets, "; ")}\n`);
  out.write(`${RESULT_PREFIX}${JSON.stringify({ synced, ...poller.result() })}\n`);
  return 0;
}

/**
 * --await: a rolling upgrade's step. Passes once the node has stayed in rotation for the hold
 * time (the gateway's checks have seen it by then), or at once when no other node of its layer
 * is in rotation (a first deployment, or nothing serving that a wait would protect).
 */
export async function runAwait(opts: CliOptions, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const want = opts.await!;
  const watch = new NodeWatch(opts.targets, { poll: opts.poll, intervalMs: opts.intervalMs, rules: opts.rules }).start();
  const deadline = Date.now() + opts.timeoutMs;
  const who = `${want.layer}/${want.node}`;
  let since: number | undefined;
  let said = "";
  try {
    for (;;) {
      await sleep(opts.intervalMs);
      if (!watch.polledAll()) continue;
      const verdicts = watch.verdicts().filter((v) => v.layer === want.layer);
      const mine = verdicts.find((v) => v.node === want.node)!;
      const others = verdicts.filter((v) => v.node !== want.node && v.inRotation);
      const now = mine.inRotation ? `in rotation (${mine.detail})` : `out of rotation, ${mine.reason}: ${mine.detail}`;
      // Said when it goes in or out, or out for another reason; not every block.
      const state = `${mine.inRotation} ${mine.reason}`;
      if (state !== said) out.write(`rpcstack-ready: ${who} ${now}\n`);
      said = state;
      if (!others.length) {
        out.write(`rpcstack-ready: ${who}: no other node of ${want.layer} is in rotation, nothing serving to wait for\n`);
        return 0;
      }
      since = mine.inRotation ? (since ?? Date.now()) : undefined;
      if (since !== undefined && Date.now() - since >= want.holdMs) {
        out.write(`rpcstack-ready: ${who} in rotation for ${want.holdMs / 1000} s: the next node may go\n`);
        return 0;
      }
      if (Date.now() >= deadline) {
        out.write(`rpcstack-ready: ${who} was not in rotation within ${opts.timeoutMs / 60_000} min (${now}); ${others.map((v) => v.node).join(", ")} still serve\n`);
        return 1;
      }
    }
  } finally {
    watch.stop();
  }
}

const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));

/**
 * Long-running health mode for the gateway: each node polled on its own loop (watch.ts).
 * /ready/<layer>: 200 while a node of the layer is in rotation (a layer's only node: while it is
 * synced), with the states; /ready/<layer>/<node>: that node's verdict; /ready: every layer;
 * /metrics: the verdicts as Prometheus gauges.
 */
export function serveHealth(opts: CliOptions): { server: Server; stop: () => void; ready: Promise<number> } {
  const watch = new NodeWatch(opts.targets, { poll: opts.poll, intervalMs: opts.intervalMs, rules: opts.rules }).start();
  const layers = [...new Set(opts.targets.map((t) => t.label))];
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const verdicts = watch.verdicts();
    if (path === "/metrics") return void res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(rotationMetrics(verdicts, opts.chainNames));
    const node = /^\/ready\/(l1|l2)\/([a-z0-9][a-z0-9-]*)$/.exec(path);
    if (node) {
      const t = opts.targets.find((x) => x.label === node[1] && x.node === node[2]);
      const v = t && verdicts.find((x) => x.layer === t.label && x.node === t.node);
      if (!t || !v) return json(res, 404, { error: `no such node: ${node[1]}/${node[2]}` });
      return json(res, v.inRotation ? 200 : 503, { ...v, state: watch.state(t) });
    }
    const wanted = path === "/ready" ? layers : path === "/ready/l1" ? ["l1"] : path === "/ready/l2" ? ["l2"] : [];
    const known = wanted.filter((l) => layers.includes(l as "l1" | "l2"));
    if (!known.length) return json(res, 404, { error: `no such check: ${path}` });
    const body: Record<string, unknown> = {};
    let ok = true;
    for (const layer of known) {
      const mine = opts.targets.filter((t) => t.label === layer);
      const fit = mine.find((t) => verdicts.find((v) => v.layer === layer && v.node === t.node)?.inRotation);
      ok &&= fit !== undefined;
      body[layer] = watch.state(fit ?? mine[0]);
      if (mine.length > 1) body[`${layer}Nodes`] = verdicts.filter((v) => v.layer === layer);
    }
    json(res, ok ? 200 : 503, body);
  });
  const ready = new Promise<number>((resolve, reject) => {
    server.once("error", (e) => reject(new UsageError(`cannot serve on ${opts.serve!.host}:${opts.serve!.port} (--serve, --serve-host): ${systemReason(e)}`)));
    server.listen(opts.serve!.port, opts.serve!.host, () => resolve((server.address() as { port: number }).port));
  });
  return {
    server,
    ready,
    stop: () => {
      watch.stop();
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
  if (opts.await) return runAwait(opts);
  if (opts.serve) {
    const host = opts.serve.host;
    return serveUntilSignal("rpcstack-ready", serveHealth(opts), (port) => `serving /ready/l1, /ready/l2, /ready on ${host}:${port}`);
  }
  return runWait(opts);
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
