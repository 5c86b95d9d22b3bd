/**
 * npm run faults: the fault run. A Sepolia stack with two nodes per chain (replicas of one chain:
 * devtools/images/standins/replica.js) from the package's compose export on this machine's Docker
 * engine; clients over HTTP and WebSocket on both chains for --minutes; every --every-seconds one
 * node is killed, restarted, paused or cut from the network. It prints what the clients saw
 * (bench/faults/report.ts), writes the run's JSON, and exits 1 when an answer was wrong or lagging
 * or a read failed while a node was fit. Not a test: a short run of it is one (test/e2e/faults.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { injectFaults } from "./faults/inject.js";
import { Load } from "./faults/load.js";
import { faultTable, judge, reportTable, withRecovery, type CallRecord, type FaultRecord, type Judged } from "./faults/report.js";
import { allInRotation, startFaultStack, type FaultStack } from "./faults/stack.js";
import { nextTag } from "../devtools/images/replicas.js";
import { run } from "../devtools/docker.js";

const USAGE = `usage: npm run faults -- [options]
  --minutes N         how long the clients run (10)
  --every-seconds N   one fault every N seconds (60)
  --down-seconds N    how long a killed, paused or cut node stays so (20)
  --clients N         clients: half over HTTP, half over WebSocket, half on each chain (16)
  --pace-ms N         each client's pause between calls (100)
  --tolerance N       readiness.toleranceBlocks of the stack (6): lag is judged against it
  --rollout           then replace both chains' node images, one node at a time, under load
  --out FILE          where the run's JSON goes (bench/results/faults.json)
  --logs DIR          keep every container's log there before the stack is removed
  --help              this text
Exit: 0 no wrong or lagging answer and no read failed while a node was fit (and, with --rollout,
no 503 during it); 1 otherwise; 2 bad arguments.`;

export interface FaultRunOptions {
  readonly minutes: number;
  readonly everySeconds: number;
  readonly downSeconds: number;
  readonly clients: number;
  readonly paceMs: number;
  readonly tolerance: number;
}

export interface FaultRun {
  readonly options: FaultRunOptions;
  readonly judged: Judged;
  readonly faults: readonly FaultRecord[];
  readonly table: string;
  readonly faultTable: string;
  /** No wrong or lagging answer, no read failed while a node was fit. */
  readonly passed: boolean;
  /** The failed calls, for a look at what happened (the first 40), with the gateway's log lines of failed requests. */
  readonly failures: readonly CallRecord[];
  readonly gatewayErrors: readonly string[];
}

/** A call still out this long when the run ends counts as failed. */
const STILL_OUT_MS = 5000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NAMES = { l1: "sep1 (L1, 2 geth replicas)", l2: "strks (L2, 2 Juno replicas)" } as const;

/** The load and the faults on a running stack; judged once the clients stopped. */
export async function runFaultRun(stack: FaultStack, o: FaultRunOptions, log: (s: string) => void): Promise<FaultRun> {
  await allInRotation(stack, 180_000);
  const load = new Load(stack, o.clients, o.paceMs).start();
  const from = Date.now();
  const until = from + o.minutes * 60_000;
  // The last fault leaves time to recover before the clients stop.
  let faults = await injectFaults(stack, { start: from, until, everyMs: o.everySeconds * 1000, downMs: o.downSeconds * 1000, quietMs: Math.min(30_000, o.everySeconds * 500) }, log);
  await sleep(Math.max(0, until - Date.now()));
  // The run ends when the clients are told to stop; a call still out then is judged only if it
  // had waited longer than any answer should take.
  const to = Date.now();
  await load.stop();
  const judgedCalls = load.calls.filter((c) => c.doneAt <= to || c.sentAt < to - STILL_OUT_MS);
  faults = withRecovery(faults, load.heads, o.tolerance);
  const judged = judge({ calls: judgedCalls, heads: load.heads, faults, from, to }, await load.truth(), o.tolerance);
  const passed = (["l1", "l2"] as const).every((c) => judged.chains[c].wrong === 0 && judged.chains[c].lagging === 0 && judged.chains[c].readsFailedWhileFit === 0 && judged.chains[c].nodesDisagree === 0);
  return { options: o, judged, faults, table: reportTable(judged, NAMES), faultTable: faultTable(faults, from), passed, failures: judgedCalls.filter((c) => c.error).slice(0, 40), gatewayErrors: gatewayErrors(stack) };
}

/** The gateway's access log lines of requests that did not end well (status 5xx, or no status), and its warnings. */
function gatewayErrors(stack: FaultStack): string[] {
  const logs = run("docker", ["logs", `${stack.prefix}rpcstack-gateway`]);
  return (logs.stdout + logs.stderr).split("\n").filter((l) => / (5\d\d|-1) \d+ [A-Za-z-]{4} /.test(l) || /is (DOWN|UP)/.test(l)).slice(-200);
}

export interface Rollout {
  readonly calls: number;
  readonly errors: Readonly<Record<string, number>>;
  readonly unavailable: number;
  /** Seconds the two compose runs took (each waits for its rollout step). */
  readonly seconds: number;
  /** The image each node runs afterwards. */
  readonly images: Readonly<Record<string, string>>;
  readonly expected: { readonly geth: string; readonly juno: string };
  readonly failures: readonly CallRecord[];
  readonly gatewayErrors: readonly string[];
}

/** A new image for every node of both chains, deployed as compose deploys it (dc-l1, then dc-l2) while clients call. */
export async function runRollout(stack: FaultStack, o: Pick<FaultRunOptions, "clients" | "paceMs">, log: (s: string) => void): Promise<Rollout> {
  await allInRotation(stack, 180_000);
  const next = { geth: nextTag(stack.images.geth), juno: nextTag(stack.images.juno) };
  stack.reexport(next);
  const load = new Load(stack, o.clients, o.paceMs).start();
  await sleep(3000);
  const t0 = Date.now();
  log(`rollout: dc-l1.yaml to ${next.geth}`);
  await stack.compose("dc-l1.yaml", "up", "-d");
  log(`rollout: dc-l2.yaml to ${next.juno}`);
  await stack.compose("dc-l2.yaml", "up", "-d");
  await allInRotation(stack, 180_000);
  const seconds = Math.round((Date.now() - t0) / 1000);
  await sleep(3000);
  const to = Date.now();
  await load.stop();
  const calls: CallRecord[] = load.calls.filter((c) => c.doneAt <= to || c.sentAt < to - STILL_OUT_MS);
  const errors: Record<string, number> = {};
  for (const c of calls) if (c.error) errors[c.error] = (errors[c.error] ?? 0) + 1;
  const images = Object.fromEntries(stack.nodes.map((n) => [n.service, run("docker", ["inspect", "--format", "{{.Config.Image}}", n.container]).stdout.trim()]));
  return { calls: calls.length, errors, unavailable: errors["http 503"] ?? 0, seconds, images, expected: next, failures: calls.filter((c) => c.error).slice(0, 40), gatewayErrors: gatewayErrors(stack) };
}

function options(argv: string[]): (FaultRunOptions & { rollout: boolean; out: string; logs?: string }) | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: "string" },
      "every-seconds": { type: "string" },
      "down-seconds": { type: "string" },
      clients: { type: "string" },
      "pace-ms": { type: "string" },
      tolerance: { type: "string" },
      rollout: { type: "boolean" },
      out: { type: "string" },
      logs: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return "help";
  const num = (name: string, v: string | undefined, fallback: number, min: number) => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min} (got "${v}")`);
    return n;
  };
  const o = {
    minutes: num("minutes", values.minutes, 10, 0.5),
    everySeconds: num("every-seconds", values["every-seconds"], 60, 5),
    downSeconds: num("down-seconds", values["down-seconds"], 20, 1),
    clients: num("clients", values.clients, 16, 4),
    paceMs: num("pace-ms", values["pace-ms"], 100, 0),
    tolerance: num("tolerance", values.tolerance, 6, 0),
    rollout: values.rollout ?? false,
    out: resolve(values.out ?? join(__dirname, "results/faults.json")),
    logs: values.logs === undefined ? undefined : resolve(values.logs),
  };
  if (o.downSeconds >= o.everySeconds) throw new Error("--down-seconds must be shorter than --every-seconds");
  return o;
}

export async function main(argv: string[]): Promise<number> {
  let o;
  try {
    o = options(argv);
  } catch (e) {
    process.stderr.write(`faults: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (o === "help") {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const log = (s: string) => process.stdout.write(`faults: ${s}\n`);
  let stack: FaultStack;
  try {
    stack = await startFaultStack(log);
  } catch (e) {
    process.stderr.write(`faults: the stack did not come up: ${(e as Error).message}\n`);
    return 1;
  }
  try {
    const r = await runFaultRun(stack, o, log);
    process.stdout.write(`\n${r.table}\n\n${r.faultTable}\n`);
    const rollout = o.rollout ? await runRollout(stack, o, log) : undefined;
    if (rollout) process.stdout.write(`\nrollout: ${rollout.calls} calls, ${rollout.unavailable} answered 503, errors ${JSON.stringify(rollout.errors)}, ${rollout.seconds} s, images ${JSON.stringify(rollout.images)}\n`);
    mkdirSync(dirname(o.out), { recursive: true });
    writeFileSync(o.out, `${JSON.stringify({ date: new Date().toISOString(), options: r.options, chains: r.judged.chains, faults: r.faults, passed: r.passed, failures: r.failures, gatewayErrors: r.gatewayErrors, rollout }, null, 2)}\n`);
    log(`wrote ${o.out}`);
    return r.passed && (!rollout || rollout.unavailable === 0) ? 0 : 1;
  } finally {
    if (o.logs) keepLogs(stack, o.logs);
    stack.down();
  }
}

function keepLogs(stack: FaultStack, dir: string) {
  mkdirSync(dir, { recursive: true });
  const names = run("docker", ["ps", "-a", "--format", "{{.Names}}", "--filter", `name=${stack.prefix}`]).stdout.split("\n").filter(Boolean);
  for (const n of names) {
    const r = run("docker", ["logs", "-t", n]);
    writeFileSync(join(dir, `${n}.log`), r.stdout + r.stderr);
  }
}

if (require.main === module) main(process.argv.slice(2)).then((code) => process.exit(code));
