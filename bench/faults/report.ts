/**
 * What a fault run saw, judged: per chain, the calls and their errors by kind, answers older
 * than the best head by more than the tolerance, block answers that differ from what the nodes
 * themselves say for that block, reads that failed while a node was fit, sends that failed (and
 * in which fault), and the longest time without a successful answer. Pure: the run records,
 * this decides.
 */

export type Layer = "l1" | "l2";

/** One call a client made through the gateway. */
export interface CallRecord {
  readonly client: string;
  readonly chain: Layer;
  readonly via: "http" | "ws";
  readonly kind: "head" | "block" | "chainId" | "send";
  readonly sentAt: number;
  readonly doneAt: number;
  /** Undefined when it succeeded; else what the client saw: "http 502", "closed without an answer", "ws closed 1012", "timeout". */
  readonly error?: string;
  /** With an HTTP error, what its answer said (bench/faults/load.ts errorDetail). */
  readonly detail?: string;
  /** A head call's answer. */
  readonly head?: number;
  /** A block call's answer. */
  readonly block?: { readonly n: number; readonly hash: string };
  /** A WebSocket read resent after its socket was closed with a code saying to reconnect. */
  readonly resent?: boolean;
}

/** Each node's head as the run read it from the node itself (undefined: it did not answer). */
export interface HeadSample {
  readonly at: number;
  readonly chain: Layer;
  readonly node: string;
  readonly head?: number;
}

export interface FaultRecord {
  readonly kind: "kill" | "restart" | "pause" | "cut";
  readonly node: string;
  readonly chain: Layer;
  readonly at: number;
  /** When the node was given back (started, unpaused, reconnected). */
  readonly restoredAt: number;
  /** When the run saw it fit again (answering, within the tolerance), if it did. */
  readonly fitAgainAt?: number;
}

export interface ChainReport {
  readonly requests: number;
  readonly ok: number;
  readonly byVia: Readonly<Record<"http" | "ws", number>>;
  readonly errors: Readonly<Record<string, number>>;
  /** Head answers older than the best head (when the call was sent) by more than the tolerance. */
  readonly lagging: number;
  /** Block answers whose hash is not what the nodes say for that block. */
  readonly wrong: number;
  /** Blocks the nodes themselves disagree on (no replica should). */
  readonly nodesDisagree: number;
  /**
   * Reads that failed while a node of the chain was fit when they were sent and when they failed,
   * except the next.
   */
  readonly readsFailedWhileFit: number;
  /**
   * WebSocket calls under way when a fault took their node away and their socket closed without a
   * close frame (1006): a reset from the node ends the tunnel in HAProxy before the filter can
   * send 1012. No proxy can answer a call inside a tunnel elsewhere; the client reconnects.
   */
  readonly wsCutWithNode: number;
  readonly sends: number;
  readonly sendsFailed: number;
  /** Failed sends by the fault whose window they fell in ("none" outside any). */
  readonly sendsFailedBy: Readonly<Record<string, number>>;
  /** WebSocket reads resent after a 1012 close (then answered). */
  readonly wsResent: number;
  /** The longest time no client got a successful answer on this chain. */
  readonly longestGapMs: number;
  /** The longest time one client went without a successful answer. */
  readonly longestClientGapMs: number;
}

export interface Judged {
  readonly chains: Readonly<Record<Layer, ChainReport>>;
}

/** The latest sample of each node of the chain at or before `t`. */
function latest(samples: readonly HeadSample[], chain: Layer, t: number): Map<string, HeadSample> {
  const out = new Map<string, HeadSample>();
  for (const s of samples) if (s.chain === chain && s.at <= t) out.set(s.node, s);
  return out;
}

/** The best head among the chain's answering nodes at `t`, and whether some node was fit (answering, within the tolerance of it). */
export function fitnessAt(samples: readonly HeadSample[], chain: Layer, t: number, tolerance: number): { best?: number; someFit: boolean } {
  const heads = [...latest(samples, chain, t).values()].map((s) => s.head).filter((h): h is number => h !== undefined);
  if (!heads.length) return { someFit: false };
  const best = Math.max(...heads);
  return { best, someFit: heads.some((h) => best - h <= tolerance) };
}

/** The longest stretch of [from, to] with no time in `hits`. */
export function longestGap(hits: readonly number[], from: number, to: number): number {
  const sorted = [...hits].filter((t) => t >= from && t <= to).sort((a, b) => a - b);
  let prev = from;
  let longest = 0;
  for (const t of [...sorted, to]) {
    longest = Math.max(longest, t - prev);
    prev = t;
  }
  return longest;
}

const windowOf = (faults: readonly FaultRecord[], chain: Layer, t: number, graceMs: number) =>
  faults.find((f) => f.chain === chain && t >= f.at && t <= (f.fitAgainAt ?? f.restoredAt) + graceMs);

/**
 * `truth`: per chain, block number -> the hash each node gave for it. `graceMs`: how long after a
 * fault a failed send still counts as its (the gateway takes a check or two to notice).
 */
export function judge(
  run: { calls: readonly CallRecord[]; heads: readonly HeadSample[]; faults: readonly FaultRecord[]; from: number; to: number },
  truth: Readonly<Record<Layer, ReadonlyMap<number, readonly string[]>>>,
  tolerance: number,
  graceMs = 10_000,
): Judged {
  const chain = (layer: Layer): ChainReport => {
    const calls = run.calls.filter((c) => c.chain === layer);
    const errors: Record<string, number> = {};
    let lagging = 0;
    let wrong = 0;
    let readsFailedWhileFit = 0;
    let wsCutWithNode = 0;
    const sendsFailedBy: Record<string, number> = {};
    for (const c of calls) {
      if (c.error) {
        errors[c.error] = (errors[c.error] ?? 0) + 1;
        if (c.kind === "send") {
          const f = windowOf(run.faults, layer, c.doneAt, graceMs);
          const label = f ? `${f.kind} ${f.node}` : "none";
          sendsFailedBy[label] = (sendsFailedBy[label] ?? 0) + 1;
        } else if (c.via === "ws" && c.error === "ws closed 1006" && run.faults.some((f) => f.chain === layer && c.doneAt >= f.at && c.doneAt <= f.restoredAt + 1000)) {
          wsCutWithNode++;
        } else if (fitnessAt(run.heads, layer, c.sentAt, tolerance).someFit && fitnessAt(run.heads, layer, c.doneAt, tolerance).someFit) {
          readsFailedWhileFit++;
        }
        continue;
      }
      if (c.head !== undefined) {
        const { best } = fitnessAt(run.heads, layer, c.sentAt, tolerance);
        if (best !== undefined && best - c.head > tolerance) lagging++;
      }
      if (c.block) {
        const known = truth[layer].get(c.block.n) ?? [];
        if (known.length && !known.includes(c.block.hash)) wrong++;
      }
    }
    const nodesDisagree = [...truth[layer].values()].filter((hashes) => new Set(hashes).size > 1).length;
    const okTimes = calls.filter((c) => !c.error).map((c) => c.doneAt);
    const clients = [...new Set(calls.map((c) => c.client))];
    return {
      requests: calls.length,
      ok: okTimes.length,
      byVia: { http: calls.filter((c) => c.via === "http").length, ws: calls.filter((c) => c.via === "ws").length },
      errors,
      lagging,
      wrong,
      nodesDisagree,
      readsFailedWhileFit,
      wsCutWithNode,
      sends: calls.filter((c) => c.kind === "send").length,
      sendsFailed: calls.filter((c) => c.kind === "send" && c.error).length,
      sendsFailedBy,
      wsResent: calls.filter((c) => c.resent && !c.error).length,
      longestGapMs: longestGap(okTimes, run.from, run.to),
      longestClientGapMs: Math.max(0, ...clients.map((id) => longestGap(calls.filter((c) => c.client === id && !c.error).map((c) => c.doneAt), run.from, run.to))),
    };
  };
  return { chains: { l1: chain("l1"), l2: chain("l2") } };
}

/** The table the run prints and docs/multinode.md shows. */
export function reportTable(j: Judged, names: Readonly<Record<Layer, string>>): string {
  const rows: [string, (r: ChainReport) => string][] = [
    ["requests (HTTP / WebSocket)", (r) => `${r.requests} (${r.byVia.http} / ${r.byVia.ws})`],
    ["answered", (r) => String(r.ok)],
    ["errors by kind", (r) => (Object.keys(r.errors).length ? Object.entries(r.errors).map(([k, n]) => `${k}: ${n}`).join(", ") : "none")],
    ["answers older than the best head by more than the tolerance", (r) => String(r.lagging)],
    ["answers that differ from the nodes' own for that block", (r) => String(r.wrong)],
    ["reads failed while a node was fit", (r) => String(r.readsFailedWhileFit)],
    ["sends failed / sent", (r) => `${r.sendsFailed} / ${r.sends}${r.sendsFailed ? ` (${Object.entries(r.sendsFailedBy).map(([k, n]) => `${k}: ${n}`).join(", ")})` : ""}`],
    ["WebSocket reads resent after 1012", (r) => String(r.wsResent)],
    ["WebSocket calls cut with their node (closed without a close frame, 1006)", (r) => String(r.wsCutWithNode)],
    ["longest time without a successful answer (any client / one client)", (r) => `${(r.longestGapMs / 1000).toFixed(1)} s / ${(r.longestClientGapMs / 1000).toFixed(1)} s`],
  ];
  const head = `| | ${names.l1} | ${names.l2} |\n| --- | --- | --- |`;
  return [head, ...rows.map(([label, f]) => `| ${label} | ${f(j.chains.l1)} | ${f(j.chains.l2)} |`)].join("\n");
}

/** Each fault with the first moment the run saw its node fit again (answering, within the tolerance of the best head). */
export function withRecovery(faults: readonly FaultRecord[], samples: readonly HeadSample[], tolerance: number): FaultRecord[] {
  return faults.map((f) => {
    const back = samples.find((s) => {
      if (s.node !== f.node || s.at < f.restoredAt || s.head === undefined) return false;
      const { best } = fitnessAt(samples, f.chain, s.at, tolerance);
      return best !== undefined && best - s.head <= tolerance;
    });
    return back ? { ...f, fitAgainAt: back.at } : f;
  });
}

/** The faults as a table: what, on which node, when, and how long until it was fit again. */
export function faultTable(faults: readonly FaultRecord[], from: number): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return [
    "| at | fault | node | down for | fit again after it was given back |",
    "| --- | --- | --- | --- | --- |",
    ...faults.map((f) => `| ${s(f.at - from)} | ${f.kind} | ${f.node} | ${s(f.restoredAt - f.at)} | ${f.fitAgainAt === undefined ? "not seen" : s(f.fitAgainAt - f.restoredAt)} |`),
  ].join("\n");
}
