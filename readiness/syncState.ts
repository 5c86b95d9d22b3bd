/**
 * The operator guide's sync rules as pure functions, corrected where the clients behave otherwise:
 *  - L2: `starknet_syncing` is `false` when caught up, but also for an empty chain or while the
 *    highest block is unknown (Juno) and within 6 blocks (Pathfinder). So `false` (or current
 *    equal to highest) counts only with a non-zero, recent head, or when the node's own
 *    readiness endpoint (Juno /ready/sync, Pathfinder /ready/synced) answers 200.
 *  - L1: `eth_syncing` false is not enough (it is also false before a consensus client drives
 *    geth): the head must be non-zero and recent, against a reference node or the clock. geth
 *    answers an object at head while it still indexes (currentBlock == highestBlock): at head.
 * Numbers may be integers or hex strings. Anything else is "unknown" with the reason, never "synced".
 */

export type SyncStatus = "synced" | "syncing" | "waiting" | "unknown";

export interface Progress {
  readonly current: number;
  readonly highest: number;
  /** 0-100, one decimal. */
  readonly percent: number;
  /** From the previous observation, when there is one and time has passed. */
  readonly blocksPerMinute?: number;
  /** Minutes until caught up at the current rate, when the rate is positive. */
  readonly etaMinutes?: number;
}

export interface NodeState {
  readonly status: SyncStatus;
  /** One line an operator can read: why this status. */
  readonly reason: string;
  readonly progress?: Progress;
}

/** What the previous poll saw, for rates. */
export interface Observation {
  readonly atMs: number;
  readonly current: number;
}

/** A JSON-RPC reply as received: a result, a JSON-RPC error, or a transport failure. */
export type RpcReply =
  | { readonly result: unknown }
  | { readonly error: { readonly code?: number; readonly message: string } }
  | { readonly failure: string };

export function blockNumber(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0 ? v : undefined;
  if (typeof v === "string" && /^0x[0-9a-fA-F]+$/.test(v)) {
    const n = Number.parseInt(v, 16);
    return Number.isSafeInteger(n) ? n : undefined;
  }
  return undefined;
}

function replyProblem(what: string, reply: RpcReply): string | undefined {
  if ("failure" in reply) return `${what}: ${reply.failure}`;
  if ("error" in reply) return `${what} returned error ${reply.error.code ?? ""} ${reply.error.message}`.replace(/\s+/g, " ");
  return undefined;
}

const unknown = (reason: string): NodeState => ({ status: "unknown", reason });

export function progress(current: number, highest: number, prev: Observation | undefined, nowMs: number): Progress {
  const percent = highest > 0 ? Math.min(100, Math.floor((current / highest) * 1000) / 10) : 0;
  const base = { current, highest, percent };
  if (!prev || nowMs <= prev.atMs) return base;
  const blocksPerMinute = Math.round(((current - prev.current) / ((nowMs - prev.atMs) / 60_000)) * 10) / 10;
  if (blocksPerMinute <= 0) return { ...base, blocksPerMinute };
  return { ...base, blocksPerMinute, etaMinutes: Math.ceil((highest - current) / blocksPerMinute) };
}

export interface L2Sample {
  readonly syncing: RpcReply;
  /** `starknet_getBlockWithTxHashes("latest")`: its number and timestamp date the head. */
  readonly latestBlock?: RpcReply;
  /** The node's own readiness endpoint: its HTTP status, or why it did not answer. */
  readonly ready?: { readonly status: number } | { readonly failure: string };
}

export interface HeadRules {
  /** The head counts as current when its timestamp is this recent. */
  readonly maxHeadAgeSeconds: number;
}

/** Starknet's "block not found": Juno and Pathfinder answer it for `latest` on an empty chain. */
const STARKNET_BLOCK_NOT_FOUND = 24;

/** L2 state from `starknet_syncing`, the latest block and (when given) the node's own readiness. */
export function l2State(sample: L2Sample, rules: HeadRules, prev: Observation | undefined, nowMs: number): NodeState {
  const problem = replyProblem("starknet_syncing", sample.syncing);
  if (problem) return unknown(problem);
  const r = (sample.syncing as { result: unknown }).result;
  let atHighest: Progress | undefined;
  if (r !== false) {
    if (typeof r !== "object" || r === null || Array.isArray(r)) {
      return unknown(`starknet_syncing returned ${JSON.stringify(r)}, expected false or a sync status object`);
    }
    const obj = r as Record<string, unknown>;
    const current = blockNumber(obj.current_block_num);
    const highest = blockNumber(obj.highest_block_num);
    if (current === undefined || highest === undefined) {
      const bad = current === undefined ? "current_block_num" : "highest_block_num";
      return unknown(`starknet_syncing has no usable ${bad} (${JSON.stringify(obj[bad])})`);
    }
    const p = progress(current, highest, prev, nowMs);
    if (current < highest) return { status: "syncing", reason: `block ${current} of ${highest}`, progress: p };
    atHighest = p;
  }
  const said = atHighest ? `starknet_syncing is at the highest known block ${atHighest.highest}` : "starknet_syncing is false";
  if (sample.ready && "status" in sample.ready) {
    if (sample.ready.status === 200) {
      return { status: "synced", reason: `${said} and the node's own readiness check answers 200`, progress: atHighest };
    }
    return { status: "syncing", reason: `${said}, but the node's own readiness check answers ${sample.ready.status} (behind or starting)`, progress: atHighest };
  }
  if (!sample.latestBlock) return unknown(`${said}, and there is no latest block to tell a caught-up node from an empty one`);
  const latest = sample.latestBlock;
  if ("error" in latest && latest.error.code === STARKNET_BLOCK_NOT_FOUND) {
    return { status: "waiting", reason: `${said} but the node has no block yet (empty chain or head not known yet)` };
  }
  const blockProblem = replyProblem("starknet_getBlockWithTxHashes", latest);
  if (blockProblem) return unknown(blockProblem);
  const block = (latest as { result: unknown }).result as Record<string, unknown> | null;
  const head = blockNumber(block?.block_number);
  const ts = blockNumber(block?.timestamp);
  if (head === undefined || ts === undefined) return unknown("the latest Starknet block has no usable block_number or timestamp");
  const p = progress(head, Math.max(head, atHighest?.highest ?? head), prev, nowMs);
  if (head === 0) {
    return { status: "waiting", reason: `${said} at block 0: the node has not found the chain's head yet`, progress: p };
  }
  return headByClock(said, head, ts, rules, p, nowMs);
}

function headByClock(said: string, head: number, ts: number, rules: HeadRules, p: Progress, nowMs: number): NodeState {
  const ageSeconds = Math.round(nowMs / 1000 - ts);
  if (ageSeconds <= rules.maxHeadAgeSeconds) {
    return { status: "synced", reason: `${said}; block ${head}, ${Math.max(ageSeconds, 0)}s old`, progress: p };
  }
  return { status: "syncing", reason: `${said}; block ${head} is ${formatAge(ageSeconds)} old (limit ${rules.maxHeadAgeSeconds}s)`, progress: p };
}

export interface L1Sample {
  readonly syncing: RpcReply;
  readonly blockNumber: RpcReply;
  /** `eth_getBlockByNumber("latest")`: its timestamp is used when there is no reference. */
  readonly latestBlock?: RpcReply;
  /** `eth_blockNumber` of the reference node, when one is configured. */
  readonly reference?: RpcReply;
}

export interface L1Rules extends HeadRules {
  /** With a reference: how many blocks behind it still count as synced. */
  readonly toleranceBlocks: number;
}

/** L1 state from one poll of the execution client (and the reference, if any). */
export function l1State(sample: L1Sample, rules: L1Rules, prev: Observation | undefined, nowMs: number): NodeState {
  const problem = replyProblem("eth_syncing", sample.syncing) ?? replyProblem("eth_blockNumber", sample.blockNumber);
  if (problem) return unknown(problem);
  const syncing = (sample.syncing as { result: unknown }).result;
  const head = blockNumber((sample.blockNumber as { result: unknown }).result);
  if (head === undefined) {
    return unknown(`eth_blockNumber returned ${JSON.stringify((sample.blockNumber as { result: unknown }).result)}, expected a hex quantity`);
  }
  let said = "eth_syncing is false";
  if (syncing !== false) {
    if (typeof syncing !== "object" || syncing === null) {
      return unknown(`eth_syncing returned ${JSON.stringify(syncing)}, expected false or a sync status object`);
    }
    const s = syncing as Record<string, unknown>;
    const current = blockNumber(s.currentBlock);
    const highest = blockNumber(s.highestBlock);
    if (current === undefined || highest === undefined) {
      return unknown(`eth_syncing has no usable ${current === undefined ? "currentBlock" : "highestBlock"}`);
    }
    const p = progress(current, highest, prev, nowMs);
    if (current < highest) return { status: "syncing", reason: `eth_syncing: block ${current} of ${highest}`, progress: p };
    if (head === 0) {
      return { status: "syncing", reason: `eth_syncing reports block ${current} of ${highest} but eth_blockNumber is 0: the state is still downloading`, progress: p };
    }
    // geth keeps answering an object at head while it indexes transactions or state history.
    said = `eth_syncing is at head (${indexingNote(s)})`;
  }
  if (head === 0) {
    return { status: "waiting", reason: `${said} at block 0: waiting for the consensus client` };
  }
  if (sample.reference) {
    const refProblem = replyProblem("reference eth_blockNumber", sample.reference);
    if (refProblem) return unknown(refProblem);
    const ref = blockNumber((sample.reference as { result: unknown }).result);
    if (ref === undefined) return unknown("reference eth_blockNumber returned no hex quantity");
    const p = progress(head, Math.max(head, ref), prev, nowMs);
    const note = said === "eth_syncing is false" ? "" : `; ${said}`;
    if (ref - head <= rules.toleranceBlocks) {
      return { status: "synced", reason: `block ${head}, reference at ${ref} (tolerance ${rules.toleranceBlocks})${note}`, progress: p };
    }
    return { status: "syncing", reason: `block ${head}, reference at ${ref}: ${ref - head} behind${note}`, progress: p };
  }
  if (!sample.latestBlock) return unknown("no reference node and no latest block to date the head");
  const blockProblem = replyProblem("eth_getBlockByNumber", sample.latestBlock);
  if (blockProblem) return unknown(blockProblem);
  const block = (sample.latestBlock as { result: unknown }).result as Record<string, unknown> | null;
  const ts = blockNumber(block?.timestamp);
  if (ts === undefined) return unknown("latest block has no usable timestamp");
  return headByClock(said, head, ts, rules, progress(head, head, prev, nowMs), nowMs);
}

/** What geth still does at head, from the fields of its sync status object. */
function indexingNote(s: Record<string, unknown>): string {
  const parts: string[] = [];
  const tx = blockNumber(s.txIndexRemainingBlocks);
  if (tx) parts.push(`transaction index: ${tx} blocks left`);
  const state = blockNumber(s.stateIndexRemaining);
  if (state) parts.push(`state history index: ${state} left`);
  return parts.length ? `still indexing, ${parts.join(", ")}` : "currentBlock equals highestBlock";
}

function formatAge(s: number): string {
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.round(s / 60)}m`;
  return `${Math.round(s / 3600)}h`;
}

/** One line for logs and the progress display. */
export function describeState(label: string, st: NodeState): string {
  const p = st.progress;
  const parts = [`${label}: ${st.status}`, st.reason];
  if (p && st.status === "syncing") {
    if (p.highest > p.current) parts.push(`${p.percent}%`);
    if (p.blocksPerMinute !== undefined) parts.push(`${p.blocksPerMinute} blocks/min`);
    if (p.etaMinutes !== undefined) parts.push(`~${p.etaMinutes} min left`);
  }
  return parts.join(" | ");
}
