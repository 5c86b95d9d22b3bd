/** One poll of each node: JSON-RPC calls in, NodeState out. */
import { httpStatus, rpcCall } from "./rpc.js";
import { l1State, l2State, type L1Rules, type NodeState, type Observation } from "./syncState.js";

export interface Target {
  readonly label: "l1" | "l2";
  readonly url: string;
  /** The node's own readiness endpoint (L2: Juno /ready/sync, Pathfinder /ready/synced). */
  readonly readyUrl?: string;
}

export interface PollOptions extends L1Rules {
  readonly l1ReferenceUrl?: string;
}

export interface Polled {
  readonly state: NodeState;
  /** The endpoint did not answer at all (for the exit code and backoff). */
  readonly unreachable: boolean;
}

export async function pollL1(url: string, opts: PollOptions, prev: Observation | undefined): Promise<Polled> {
  const [syncing, blockNumber, latestBlock, reference] = await Promise.all([
    rpcCall(url, "eth_syncing"),
    rpcCall(url, "eth_blockNumber"),
    opts.l1ReferenceUrl ? undefined : rpcCall(url, "eth_getBlockByNumber", ["latest", false]),
    opts.l1ReferenceUrl ? rpcCall(opts.l1ReferenceUrl, "eth_blockNumber") : undefined,
  ]);
  return {
    state: l1State({ syncing, blockNumber, latestBlock, reference }, opts, prev, Date.now()),
    unreachable: "failure" in syncing && "failure" in blockNumber,
  };
}

export async function pollL2(t: Target, opts: PollOptions, prev: Observation | undefined): Promise<Polled> {
  const [syncing, latestBlock, ready] = await Promise.all([
    rpcCall(t.url, "starknet_syncing"),
    rpcCall(t.url, "starknet_getBlockWithTxHashes", ["latest"]),
    t.readyUrl ? httpStatus(t.readyUrl) : undefined,
  ]);
  return { state: l2State({ syncing, latestBlock, ready }, opts, prev, Date.now()), unreachable: "failure" in syncing };
}

export function poll(t: Target, opts: PollOptions, prev: Observation | undefined): Promise<Polled> {
  return t.label === "l1" ? pollL1(t.url, opts, prev) : pollL2(t, opts, prev);
}
