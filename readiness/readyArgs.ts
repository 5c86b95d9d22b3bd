/** rpcstack-ready's command line: its usage text, and the options it parses into. */
import { parseArgs } from "node:util";
import type { PollOptions, Target } from "./poll.js";
import type { RotationRules } from "./rotation.js";
import { numberArg, UsageError } from "../kit/args.js";
import { parseVolumeArg, thresholdArgs, type DiskThresholds } from "./disk.js";

export const USAGE = `usage: rpcstack-ready [--l1 URL] [--l2 URL] [options]
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

/** --help: the command prints the usage text and exits 0. */
export class HelpRequested extends Error {}

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

