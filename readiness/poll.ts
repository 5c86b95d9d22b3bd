/** One poll of each node: JSON-RPC calls in, NodeState out. */
import { httpStatus, rpcCall } from "./rpc.js";
import { blockNumber as quantity, l1State, l2State, type L1Rules, type NodeState, type Observation, type RpcReply } from "./syncState.js";

export interface Target {
  readonly label: "l1" | "l2";
  readonly url: string;
  /** The node's own readiness endpoint (L2: Juno /ready/sync, Pathfinder /ready/synced). */
  readonly readyUrl?: string;
  /** Its name among the layer's nodes (its service name); the layer's only node has its host's. */
  readonly node?: string;
}

export interface PollOptions extends L1Rules {
  readonly l1ReferenceUrl?: string;
  /** How long one call may take (10 s unless said). */
  readonly timeoutMs?: number;
  /** Where the reference head comes from, when not asked each poll (a cache shared by the nodes). */
  readonly reference?: () => Promise<RpcReply>;
}

export interface Polled {
  readonly state: NodeState;
  /** The endpoint did not answer at all (for the exit code and backoff). */
  readonly unreachable: boolean;
  /** The head the poll saw, when it saw one. */
  readonly head?: number;
}

const resultOf = (r: RpcReply | undefined): unknown => (r && "result" in r ? r.result : undefined);

export async function pollL1(url: string, opts: PollOptions, prev: Observation | undefined): Promise<Polled> {
  const call = (method: string, params: unknown[] = []) => rpcCall(url, method, params, opts.timeoutMs);
  const [syncing, blockNumber, latestBlock, reference] = await Promise.all([
    call("eth_syncing"),
    call("eth_blockNumber"),
    opts.l1ReferenceUrl ? undefined : call("eth_getBlockByNumber", ["latest", false]),
    opts.l1ReferenceUrl ? (opts.reference?.() ?? rpcCall(opts.l1ReferenceUrl, "eth_blockNumber", [], opts.timeoutMs)) : undefined,
  ]);
  return {
    state: l1State({ syncing, blockNumber, latestBlock, reference }, opts, prev, Date.now()),
    unreachable: "failure" in syncing && "failure" in blockNumber,
    head: quantity(resultOf(blockNumber)),
  };
}

export async function pollL2(t: Target, opts: PollOptions, prev: Observation | undefined): Promise<Polled> {
  const [syncing, latestBlock, ready] = await Promise.all([
    rpcCall(t.url, "starknet_syncing", [], opts.timeoutMs),
    rpcCall(t.url, "starknet_getBlockWithTxHashes", ["latest"], opts.timeoutMs),
    t.readyUrl ? httpStatus(t.readyUrl, opts.timeoutMs) : undefined,
  ]);
  const block = resultOf(latestBlock) as { block_number?: unknown } | undefined;
  return { state: l2State({ syncing, latestBlock, ready }, opts, prev, Date.now()), unreachable: "failure" in syncing, head: quantity(block?.block_number) };
}

export function poll(t: Target, opts: PollOptions, prev: Observation | undefined): Promise<Polled> {
  return t.label === "l1" ? pollL1(t.url, opts, prev) : pollL2(t, opts, prev);
}
