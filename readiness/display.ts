/** How rpcstack-ready shows the nodes it waits for: a line per round, or bars on a terminal. */
import type { Target } from "./poll.js";
import { describeState, type NodeState } from "./syncState.js";
import { nodeKey } from "./watch.js";

/** What a display reads of the poller. */
export interface StatePoller {
  state(t: Target): NodeState;
}

/** A node's name on screen: its layer, or its own key where the layer has several nodes. */
export const shownAs = (targets: readonly Target[], t: Target) => (targets.filter((x) => x.label === t.label).length > 1 ? nodeKey(t) : t.label);

export interface Display {
  update(poller: StatePoller): void;
  stop(): void;
}

/** Each node's state in one line, under the name it is shown by. */
export const describeAll = (poller: StatePoller, targets: readonly Target[], separator: string) =>
  targets.map((t) => describeState(shownAs(targets, t), poller.state(t))).join(separator);

export function plainDisplay(out: NodeJS.WritableStream, targets: readonly Target[]): Display {
  return {
    update(poller) {
      out.write(`[${new Date().toISOString()}] ${describeAll(poller, targets, "  ||  ")}\n`);
    },
    stop() {},
  };
}

export function barDisplay(targets: readonly Target[]): Display {
  // Only a terminal gets bars; the in-container run has no TTY and no node_modules.
  const { MultiBar, Presets } = require("cli-progress") as typeof import("cli-progress");
  const multi = new MultiBar({ format: " {label} [{bar}] {percentage}% | {value}/{total} | {reason}", hideCursor: true, clearOnComplete: false }, Presets.shades_classic);
  const bars = new Map(targets.map((t) => [nodeKey(t), multi.create(1, 0, { label: shownAs(targets, t), reason: "starting" })]));
  return {
    update(poller) {
      for (const t of targets) {
        const st = poller.state(t);
        const p = st.progress;
        const bar = bars.get(nodeKey(t))!;
        bar.setTotal(Math.max(p?.highest ?? 1, 1));
        bar.update(st.status === "synced" ? Math.max(p?.highest ?? 1, 1) : (p?.current ?? 0), { reason: `${st.status}: ${st.reason}` });
      }
    },
    stop: () => multi.stop(),
  };
}
