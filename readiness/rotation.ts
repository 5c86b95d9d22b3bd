/**
 * Which nodes of a chain are fit to serve, by the issue's rule: a node is in rotation while it
 * answers, is on the chain it should be, counts as synced by its own checks (syncState.ts), and
 * is within `toleranceBlocks` of the best head among the chain's nodes (not only of its own view
 * of the network). Each verdict says why a node is out; Prometheus gauges carry them. Pure.
 */
import type { NodeState } from "./syncState.js";

/** Why a node is out of rotation, as the metrics label it. */
export const OUT_REASONS = ["unreachable", "wrong_chain", "not_synced", "lagging"] as const;
export type OutReason = (typeof OUT_REASONS)[number];

/** The last poll of one node, as the watcher keeps it. */
export interface NodeSample {
  readonly layer: "l1" | "l2";
  readonly node: string;
  /** Its head, when the last poll reached it. */
  readonly head?: number;
  /** What its chain id call answered (hex), when asked. */
  readonly chainId?: string;
  /** Its sync state by its own checks. */
  readonly state: NodeState;
  /** The last poll did not reach it, or reached it too long ago. */
  readonly unreachable: boolean;
}

export interface RotationRules {
  readonly toleranceBlocks: number;
  /** The chain id each layer's nodes must answer (hex, any case); unchecked where absent. */
  readonly chainIds?: Partial<Record<"l1" | "l2", string>>;
}

export interface Verdict {
  readonly layer: "l1" | "l2";
  readonly node: string;
  readonly inRotation: boolean;
  readonly head?: number;
  /** The best head among the layer's reachable nodes on the right chain. */
  readonly bestHead?: number;
  /** Blocks behind the best head. */
  readonly lag?: number;
  readonly reason?: OutReason;
  /** One line an operator can read. */
  readonly detail: string;
}

const sameChain = (a: string, b: string) => {
  try {
    return BigInt(a) === BigInt(b);
  } catch {
    return a.toLowerCase() === b.toLowerCase();
  }
};

/** The verdict on every node, layer by layer. */
export function rotation(samples: readonly NodeSample[], rules: RotationRules): Verdict[] {
  const wrongChain = (s: NodeSample) => {
    const want = rules.chainIds?.[s.layer];
    return want !== undefined && s.chainId !== undefined && !sameChain(s.chainId, want);
  };
  const best = new Map<string, number>();
  for (const s of samples) {
    if (s.unreachable || s.head === undefined || wrongChain(s)) continue;
    best.set(s.layer, Math.max(best.get(s.layer) ?? 0, s.head));
  }
  return samples.map((s): Verdict => {
    const bestHead = best.get(s.layer);
    const lag = s.head !== undefined && bestHead !== undefined ? Math.max(0, bestHead - s.head) : undefined;
    const base = { layer: s.layer, node: s.node, head: s.head, bestHead, lag };
    const out = (reason: OutReason, detail: string): Verdict => ({ ...base, inRotation: false, reason, detail });
    if (s.unreachable) return out("unreachable", s.state.reason);
    if (wrongChain(s)) return out("wrong_chain", `answers chain id ${s.chainId}, not ${rules.chainIds![s.layer]}`);
    if (s.state.status !== "synced") return out("not_synced", `${s.state.status}: ${s.state.reason}`);
    if (lag !== undefined && lag > rules.toleranceBlocks) return out("lagging", `block ${s.head}, ${lag} behind the best head ${bestHead} (tolerance ${rules.toleranceBlocks})`);
    return { ...base, inRotation: true, detail: lag === undefined ? s.state.reason : `block ${s.head}, ${lag} behind the best head ${bestHead}` };
  });
}

const label = (v: Verdict, chains: Partial<Record<"l1" | "l2", string>>) =>
  `layer="${v.layer}",node="${v.node}"${chains[v.layer] ? `,chain="${chains[v.layer]}"` : ""}`;

/**
 * Prometheus text: per node, whether it is in rotation, its head and lag, and why it is out (one
 * gauge per reason, 1 for the current one). `chains`: the gateway path each layer is served at.
 */
export function rotationMetrics(verdicts: readonly Verdict[], chains: Partial<Record<"l1" | "l2", string>> = {}): string {
  const gauge = (name: string, help: string, lines: string[]) => [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, ...lines];
  const lines = [
    ...gauge("rpcstack_node_in_rotation", "1 while the node is fit to serve: answering, synced, within the tolerance of the chain's best head.", verdicts.map((v) => `rpcstack_node_in_rotation{${label(v, chains)}} ${v.inRotation ? 1 : 0}`)),
    ...gauge("rpcstack_node_lag_blocks", "Blocks the node is behind the best head among the chain's nodes.", verdicts.filter((v) => v.lag !== undefined).map((v) => `rpcstack_node_lag_blocks{${label(v, chains)}} ${v.lag}`)),
    ...gauge("rpcstack_node_head_block", "The node's head as last polled.", verdicts.filter((v) => v.head !== undefined).map((v) => `rpcstack_node_head_block{${label(v, chains)}} ${v.head}`)),
    ...gauge("rpcstack_node_out_reason", "1 for the reason the node is out of rotation (unreachable, wrong_chain, not_synced, lagging), 0 for the others.", verdicts.flatMap((v) => OUT_REASONS.map((r) => `rpcstack_node_out_reason{${label(v, chains)},reason="${r}"} ${v.reason === r ? 1 : 0}`))),
  ];
  return `${lines.join("\n")}\n`;
}
