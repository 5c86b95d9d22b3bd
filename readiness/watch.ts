/**
 * Polls each node on a loop of its own (a node that hangs delays no other), keeps its last
 * sample, and gives the rotation verdicts (rotation.ts) at any moment: a node whose last answer
 * is older than a few intervals counts as unreachable even while a poll of it still waits.
 */
import { poll, type PollOptions, type Target } from "./poll.js";
import { rotation, type NodeSample, type RotationRules, type Verdict } from "./rotation.js";
import { rpcCall } from "./rpc.js";
import type { NodeState, Observation, RpcReply } from "./syncState.js";

/** The call each layer answers its chain id to. */
const CHAIN_ID_METHOD = { l1: "eth_chainId", l2: "starknet_chainId" } as const;
/** The reference node is a public service: asked at most this often, whatever the interval. */
const REFERENCE_EVERY_MS = 15_000;

export interface WatchOptions {
  readonly poll: PollOptions;
  readonly intervalMs: number;
  readonly rules: RotationRules;
}

interface Kept {
  state: NodeState;
  head?: number;
  chainId?: string;
  okAtMs?: number;
  failed: boolean;
  seen?: Observation;
}

/** The key a node is known by: `l1/geth-2`. */
export const nodeKey = (t: Pick<Target, "label" | "node">) => `${t.label}/${t.node ?? t.label}`;

export class NodeWatch {
  private readonly kept = new Map<string, Kept>();
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly pollOpts: PollOptions;

  constructor(readonly targets: readonly Target[], private readonly opts: WatchOptions) {
    let ref: { atMs: number; reply: Promise<RpcReply> } | undefined;
    const url = opts.poll.l1ReferenceUrl;
    const reference = url
      ? () => {
          if (!ref || Date.now() - ref.atMs > REFERENCE_EVERY_MS) ref = { atMs: Date.now(), reply: rpcCall(url, "eth_blockNumber", [], opts.poll.timeoutMs) };
          return ref.reply;
        }
      : undefined;
    this.pollOpts = { ...opts.poll, timeoutMs: opts.poll.timeoutMs ?? this.timeoutMs, reference };
    for (const t of targets) this.kept.set(nodeKey(t), { state: { status: "unknown", reason: "not polled yet" }, failed: true });
  }

  /** A poll may take two intervals and a half (at least a second); after three and a half without an answer a node is unreachable. */
  private get timeoutMs() {
    return Math.max(1000, 2.5 * this.opts.intervalMs);
  }
  private get staleMs() {
    return Math.max(1500, 3.5 * this.opts.intervalMs);
  }

  start(): this {
    for (const t of this.targets) void this.loop(t);
    return this;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  private async loop(t: Target): Promise<void> {
    while (!this.stopped) {
      await this.pollOnce(t);
      if (this.stopped) return;
      await new Promise<void>((r) => {
        const timer = setTimeout(() => (this.timers.delete(timer), r()), this.opts.intervalMs);
        this.timers.add(timer);
      });
    }
  }

  private async pollOnce(t: Target): Promise<void> {
    const k = this.kept.get(nodeKey(t))!;
    const wanted = this.opts.rules.chainIds?.[t.label];
    const [polled, chainId] = await Promise.all([
      poll(t, this.pollOpts, k.seen),
      wanted ? rpcCall(t.url, CHAIN_ID_METHOD[t.label], [], this.pollOpts.timeoutMs) : undefined,
    ]);
    k.state = polled.state;
    k.head = polled.head;
    k.failed = polled.unreachable;
    if (chainId && "result" in chainId && typeof chainId.result === "string") k.chainId = chainId.result;
    if (!polled.unreachable) k.okAtMs = Date.now();
    if (polled.state.progress) k.seen = { atMs: Date.now(), current: polled.state.progress.current };
  }

  /** Whether every node has been polled once (reached or not). */
  polledAll(): boolean {
    return [...this.kept.values()].every((k) => k.state.reason !== "not polled yet");
  }

  samples(nowMs = Date.now()): NodeSample[] {
    return this.targets.map((t) => {
      const k = this.kept.get(nodeKey(t))!;
      const stale = k.okAtMs === undefined || nowMs - k.okAtMs > this.staleMs;
      const unreachable = k.failed || stale;
      const state = !k.failed && stale ? { status: "unknown" as const, reason: `no answer for ${Math.round((nowMs - (k.okAtMs ?? nowMs)) / 1000)}s` } : k.state;
      return { layer: t.label, node: t.node ?? t.label, head: unreachable ? undefined : k.head, chainId: k.chainId, state, unreachable };
    });
  }

  verdicts(nowMs = Date.now()): Verdict[] {
    return rotation(this.samples(nowMs), this.opts.rules);
  }

  /** The node's own sync state as last polled. */
  state(t: Target): NodeState {
    return this.kept.get(nodeKey(t))!.state;
  }
}
