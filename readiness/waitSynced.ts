/** rpcstack-ready's one-shot run: poll every node until all are synced, or report once, or time out. */
import { setTimeout as sleep } from "node:timers/promises";
import { poll, type Polled, type Target } from "./poll.js";
import { RESULT_PREFIX } from "./result.js";
import type { NodeState, Observation } from "./syncState.js";
import { nodeKey } from "./watch.js";
import { barDisplay, describeAll, plainDisplay, shownAs } from "./display.js";
import { systemReason } from "../kit/errors.js";
import { describeUse } from "./disk.js";
import { volumeUse } from "../volumes/space.js";
import type { CliOptions } from "./readyArgs.js";

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
