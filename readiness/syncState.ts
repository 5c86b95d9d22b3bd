/**
 * The operator guide's sync rules as pure functions, with the corrections of FACTS.md:
 *  - L2: `starknet_syncing` is `false` when caught up; otherwise synced only when
 *    current_block_num equals highest_block_num. Numbers may be integers or hex strings.
 *  - L1: `eth_syncing` false is not enough (it is also false before a consensus client drives
 *    geth): the head must be non-zero and recent, against a reference node or the clock.
 * Anything else is "unknown" with the reason, never "synced".
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

/** L2 state from a `starknet_syncing` reply. */
export function l2State(reply: RpcReply, prev: Observation | undefined, nowMs: number): NodeState {
  const problem = replyProblem("starknet_syncing", reply);
  if (problem) return unknown(problem);
  const r = (reply as { result: unknown }).result;
  if (r === false) return { status: "synced", reason: "starknet_syncing is false (caught up)" };
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
  if (current === highest) return { status: "synced", reason: `at block ${current}, the highest known`, progress: p };
  if (current > highest) return { status: "synced", reason: `at block ${current}, past the highest known ${highest}`, progress: p };
  return { status: "syncing", reason: `block ${current} of ${highest}`, progress: p };
}

export interface L1Sample {
  readonly syncing: RpcReply;
  readonly blockNumber: RpcReply;
  /** `eth_getBlockByNumber("latest")`: its timestamp is used when there is no reference. */
  readonly latestBlock?: RpcReply;
  /** `eth_blockNumber` of the reference node, when one is configured. */
  readonly reference?: RpcReply;
}

export interface L1Rules {
  readonly toleranceBlocks: number;
  /** Without a reference, the head counts as current when its timestamp is this recent. */
  readonly maxHeadAgeSeconds: number;
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
    return { status: "syncing", reason: `eth_syncing: block ${current} of ${highest}`, progress: progress(current, highest, prev, nowMs) };
  }
  if (head === 0) {
    return { status: "waiting", reason: "eth_syncing is false at block 0: waiting for the consensus client" };
  }
  if (sample.reference) {
    const refProblem = replyProblem("reference eth_blockNumber", sample.reference);
    if (refProblem) return unknown(refProblem);
    const ref = blockNumber((sample.reference as { result: unknown }).result);
    if (ref === undefined) return unknown("reference eth_blockNumber returned no hex quantity");
    const p = progress(head, Math.max(head, ref), prev, nowMs);
    if (ref - head <= rules.toleranceBlocks) {
      return { status: "synced", reason: `block ${head}, reference at ${ref} (tolerance ${rules.toleranceBlocks})`, progress: p };
    }
    return { status: "syncing", reason: `block ${head}, reference at ${ref}: ${ref - head} behind`, progress: p };
  }
  if (!sample.latestBlock) return unknown("no reference node and no latest block to date the head");
  const blockProblem = replyProblem("eth_getBlockByNumber", sample.latestBlock);
  if (blockProblem) return unknown(blockProblem);
  const block = (sample.latestBlock as { result: unknown }).result as Record<string, unknown> | null;
  const ts = blockNumber(block?.timestamp);
  if (ts === undefined) return unknown("latest block has no usable timestamp");
  const ageSeconds = Math.round(nowMs / 1000 - ts);
  if (ageSeconds <= rules.maxHeadAgeSeconds) {
    return { status: "synced", reason: `block ${head}, ${Math.max(ageSeconds, 0)}s old`, progress: progress(head, head, prev, nowMs) };
  }
  return { status: "syncing", reason: `block ${head} is ${formatAge(ageSeconds)} old (limit ${rules.maxHeadAgeSeconds}s)`, progress: progress(head, head, prev, nowMs) };
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
