/**
 * Correctness beside speed: a proxy's answers are compared with the node's for the same calls on
 * final blocks (same result, and the id the caller sent, whatever a cache holds), and its `latest`
 * with the node's head read just before. Pure: the bench does the calls and hands the answers here.
 */
import { isDeepStrictEqual } from "node:util";

export type JsonRpcId = number | string;

export interface ProbeCall {
  readonly id: JsonRpcId;
  readonly method: string;
  readonly params: readonly unknown[];
}

export const callBody = (c: ProbeCall) => JSON.stringify({ jsonrpc: "2.0", id: c.id, method: c.method, params: c.params });

/**
 * Calls on final data only (blocks below `old`, mined receipts, the chain id), each sent twice with
 * different ids (a number, then a string), so a cache that answers with the id it stored shows.
 * Deterministic: the same blocks for every proxy in a run.
 */
export function probeCalls(old: number, txs: readonly string[], count: number): ProbeCall[] {
  if (old < 1 || !txs.length) throw new Error("probe calls need at least one old block and one transaction");
  const calls: ProbeCall[] = [];
  for (let i = 0; calls.length < count; i++) {
    const kind = i % 3;
    const [method, params]: [string, unknown[]] =
      kind === 0 ? ["eth_getBlockByNumber", [`0x${(1 + ((i * 7919) % old)).toString(16)}`, false]]
      : kind === 1 ? ["eth_getTransactionReceipt", [txs[(i * 104_729) % txs.length]]]
      : ["eth_chainId", []];
    calls.push({ id: 1_000_000 + i, method, params }, { id: `probe-${i}`, method, params });
  }
  return calls.slice(0, count);
}

export type Problem = "wrong id" | "wrong result" | "error" | "not JSON-RPC";

export interface Verdict {
  readonly call: ProbeCall;
  /** Undefined when the proxy answered as the node did. */
  readonly problem?: Problem;
  readonly detail?: string;
}

/** One proxy answer (raw text) against the node's answer to the same call (parsed). */
export function judgeAnswer(call: ProbeCall, node: { result?: unknown; error?: unknown }, peerText: string): Verdict {
  let peer: { jsonrpc?: unknown; id?: unknown; result?: unknown; error?: unknown };
  try {
    peer = JSON.parse(peerText);
  } catch {
    return { call, problem: "not JSON-RPC", detail: peerText.slice(0, 200) };
  }
  if (typeof peer !== "object" || peer === null || Array.isArray(peer) || peer.jsonrpc !== "2.0") return { call, problem: "not JSON-RPC", detail: peerText.slice(0, 200) };
  if (!isDeepStrictEqual(peer.id, call.id)) return { call, problem: "wrong id", detail: `sent ${JSON.stringify(call.id)}, got ${JSON.stringify(peer.id)}` };
  if ("error" in node) return "error" in peer ? { call } : { call, problem: "wrong result", detail: "the node answered an error, the proxy a result" };
  if ("error" in peer) return { call, problem: "error", detail: JSON.stringify(peer.error).slice(0, 200) };
  if (!isDeepStrictEqual(peer.result, node.result)) return { call, problem: "wrong result", detail: `${JSON.stringify(peer.result).slice(0, 120)} vs the node's ${JSON.stringify(node.result).slice(0, 120)}` };
  return { call };
}

/** A proxy's head (eth_blockNumber through it) and the node's head read just before that call. */
export interface HeadSample {
  readonly nodeBefore: number;
  readonly peer: number;
}

export interface Correctness {
  readonly calls: number;
  readonly wrongIds: number;
  readonly wrongResults: number;
  readonly errors: number;
  /** First problem of each kind, for the note. */
  readonly examples: string[];
  readonly heads: number;
  /** Answers whose head was older than the node's head before the call, and by how many blocks at most. */
  readonly headsBehind: number;
  readonly maxBlocksBehind: number;
  readonly ok: boolean;
}

export function summarize(verdicts: readonly Verdict[], heads: readonly HeadSample[]): Correctness {
  const count = (...ps: Problem[]) => verdicts.filter((v) => v.problem && ps.includes(v.problem)).length;
  const seen = new Set<Problem>();
  const examples: string[] = [];
  for (const v of verdicts) {
    if (!v.problem || seen.has(v.problem)) continue;
    seen.add(v.problem);
    examples.push(`${v.problem}: ${v.call.method} ${JSON.stringify(v.call.params)}: ${v.detail}`);
  }
  const behind = heads.map((h) => h.nodeBefore - h.peer).filter((d) => d > 0);
  const c = {
    calls: verdicts.length,
    wrongIds: count("wrong id"),
    wrongResults: count("wrong result", "not JSON-RPC"),
    errors: count("error"),
    examples,
    heads: heads.length,
    headsBehind: behind.length,
    maxBlocksBehind: Math.max(0, ...behind),
  };
  return { ...c, ok: c.wrongIds + c.wrongResults + c.errors + c.headsBehind === 0 };
}

/** "ok" or what was wrong, for the table. */
export function describe(c: Correctness): string {
  if (c.ok) return `ok (${c.calls} calls, ${c.heads} heads)`;
  const parts = [
    c.wrongIds && `WRONG ID ${c.wrongIds}/${c.calls}`,
    c.wrongResults && `WRONG RESULT ${c.wrongResults}/${c.calls}`,
    c.errors && `ERRORS ${c.errors}/${c.calls}`,
    c.headsBehind && `STALE LATEST ${c.headsBehind}/${c.heads} (up to ${c.maxBlocksBehind} blocks)`,
  ];
  return parts.filter(Boolean).join(", ");
}
