/** The fault run's judgement (bench/faults/report.ts), on recorded calls: what counts as lagging, wrong or a read failed while a node was fit. */
import { describe, expect, it } from "vitest";
import { errorDetail } from "../bench/faults/load.js";
import { judge, type CallRecord, type FaultRecord, type HeadSample } from "../bench/faults/report.js";

const T = 1_000_000;
const heads: HeadSample[] = [0, 1000, 2000, 3000, 4000, 5000, 6000].flatMap((dt) => [
  { at: T + dt, chain: "l1" as const, node: "geth", head: 100 },
  { at: T + dt, chain: "l1" as const, node: "geth-2", head: dt >= 2000 && dt < 4000 ? undefined : 100 },
]);
const kill: FaultRecord = { kind: "kill", node: "geth-2", chain: "l1", at: T + 2000, restoredAt: T + 4000 };
const call = (over: Partial<CallRecord>): CallRecord => ({ client: "c", chain: "l1", via: "http", kind: "head", sentAt: T + 500, doneAt: T + 600, head: 100, ...over });
const judged = (calls: CallRecord[]) => judge({ calls, heads, faults: [kill], from: T, to: T + 6000 }, { l1: new Map([[50, ["0xa", "0xa"]]]), l2: new Map() }, 6).chains.l1;

describe("the fault run's judgement", () => {
  it("a head more than the tolerance behind the best is lagging; a block hash the nodes do not give is wrong", () => {
    const r = judged([call({ head: 93 }), call({ head: 94 }), call({ kind: "block", head: undefined, block: { n: 50, hash: "0xb" } }), call({ kind: "block", head: undefined, block: { n: 50, hash: "0xa" } })]);
    expect({ lagging: r.lagging, wrong: r.wrong }).toEqual({ lagging: 1, wrong: 1 });
  });

  it("a read that failed while a node was fit counts, over HTTP and WebSocket alike; a failed send does not", () => {
    const r = judged([call({ error: "closed without an answer" }), call({ via: "ws", error: "timeout" }), call({ kind: "send", error: "http 502" })]);
    expect(r.readsFailedWhileFit).toBe(2);
    expect(r.sendsFailedBy).toEqual({ none: 1 });
  });

  it("a WebSocket call closed without a close frame while a fault took a node away is counted apart; the same close outside a fault is a failed read", () => {
    const r = judged([call({ via: "ws", error: "ws closed 1006", sentAt: T + 2000, doneAt: T + 2030 }), call({ via: "ws", error: "ws closed 1006", sentAt: T + 5500, doneAt: T + 5600 })]);
    expect({ cut: r.wsCutWithNode, failed: r.readsFailedWhileFit }).toEqual({ cut: 1, failed: 1 });
  });
});

describe("what an error answer said", () => {
  it("is the JSON-RPC error's message where there is one (the gateway's refusals), else the answer's start (HAProxy's own pages)", () => {
    expect(errorDetail('{"jsonrpc":"2.0","id":null,"error":{"code":-32053,"message":"STRK node unavailable or not synced"}}')).toBe("STRK node unavailable or not synced");
    expect(errorDetail("<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>")).toBe("<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>");
    expect(errorDetail("x".repeat(500))).toHaveLength(200);
  });
});
