/** rpcstack-ready --await LAYER/NODE: a rolling upgrade's wait for one node to be in rotation. */
import { setTimeout as sleep } from "node:timers/promises";
import { NodeWatch } from "./watch.js";
import type { CliOptions } from "./readyArgs.js";

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
