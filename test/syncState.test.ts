import { describe, expect, it } from "vitest";
import { blockNumber, describeState, l1State, l2State, progress, type L1Sample, type RpcReply } from "../readiness/syncState.js";

const ok = (result: unknown): RpcReply => ({ result });
const NOW = 1_800_000_000_000;
const rules = { toleranceBlocks: 6, maxHeadAgeSeconds: 300 };
const status = (cur: unknown, high: unknown) => ok({ starting_block_num: 0, current_block_num: cur, highest_block_num: high });

describe("block numbers", () => {
  it("accepts integers and hex strings, nothing else", () => {
    expect([blockNumber(12), blockNumber("0xc"), blockNumber("0x0"), blockNumber(0)]).toEqual([12, 12, 0, 0]);
    expect([blockNumber("12"), blockNumber(-1), blockNumber(1.5), blockNumber(null), blockNumber("0x"), blockNumber({})]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});

describe("L2 state table (starknet_syncing)", () => {
  const cases: [string, RpcReply, string, RegExp][] = [
    ["false: caught up", ok(false), "synced", /false/],
    ["integers, behind", status(90, 100), "syncing", /block 90 of 100/],
    ["hex, behind", status("0x5a", "0x64"), "syncing", /block 90 of 100/],
    ["integers, current equals highest", status(100, 100), "synced", /at block 100/],
    ["hex, current equals highest", status("0x64", "0x64"), "synced", /at block 100/],
    ["mixed encodings", status("0x64", 100), "synced", /at block 100/],
    ["current past highest (new head seen first)", status(101, 100), "synced", /past the highest/],
    ["missing current", ok({ highest_block_num: 5 }), "unknown", /current_block_num/],
    ["garbage highest", status(5, "lots"), "unknown", /highest_block_num \("lots"\)/],
    ["decimal string is not a number here", status("90", "100"), "unknown", /current_block_num/],
    ["true is not a status", ok(true), "unknown", /returned true/],
    ["null", ok(null), "unknown", /returned null/],
    ["array", ok([1, 2]), "unknown", /returned \[1,2\]/],
    ["JSON-RPC error", { error: { code: -32601, message: "Method not found" } }, "unknown", /error -32601 Method not found/],
    ["endpoint down", { failure: "http://juno:6060 unreachable (ECONNREFUSED)" }, "unknown", /ECONNREFUSED/],
  ];
  it.each(cases)("%s", (_l, reply, want, reason) => {
    const st = l2State(reply, undefined, NOW);
    expect(st.status).toBe(want);
    expect(st.reason).toMatch(reason);
  });

  it("never calls anything but false or equal numbers synced", () => {
    for (const reply of [status(99, 100), ok("false"), ok(0), ok({}), status(undefined, undefined)]) {
      expect(l2State(reply, undefined, NOW).status).not.toBe("synced");
    }
  });
});

describe("L1 state table", () => {
  const head = (n: number, ageSeconds: number): Partial<L1Sample> => ({
    blockNumber: ok(`0x${n.toString(16)}`),
    latestBlock: ok({ number: `0x${n.toString(16)}`, timestamp: `0x${Math.floor(NOW / 1000 - ageSeconds).toString(16)}` }),
  });
  const sample = (s: Partial<L1Sample>): L1Sample => ({ syncing: ok(false), blockNumber: ok("0x0"), ...s });
  const cases: [string, L1Sample, string, RegExp][] = [
    ["eth_syncing false at block 0: waiting for the consensus client", sample({ ...head(0, 5) }), "waiting", /waiting for the consensus client/],
    ["syncing object (hex, geth style)", sample({ syncing: ok({ currentBlock: "0x10", highestBlock: "0x20" }), ...head(16, 5000) }), "syncing", /block 16 of 32/],
    ["synced by the clock: fresh head", sample(head(100, 12)), "synced", /block 100, 12s old/],
    ["stale head without a reference", sample(head(100, 3 * 3600)), "syncing", /3h old/],
    ["synced by the reference, within tolerance", sample({ ...head(100, 9999), reference: ok("0x6a") }), "synced", /reference at 106/],
    ["behind the reference, past tolerance", sample({ ...head(100, 1), reference: ok("0x6b") }), "syncing", /7 behind/],
    ["ahead of the reference", sample({ ...head(110, 1), reference: ok("0x64") }), "synced", /reference at 100/],
    ["reference down", sample({ ...head(100, 1), reference: { failure: "https://ref unreachable (ENOTFOUND)" } }), "unknown", /reference eth_blockNumber: .*ENOTFOUND/],
    ["node down", sample({ syncing: { failure: "http://geth:8545 unreachable (ECONNREFUSED)" } }), "unknown", /ECONNREFUSED/],
    ["eth_syncing error", sample({ syncing: { error: { code: -32000, message: "boom" } } }), "unknown", /error -32000 boom/],
    ["eth_blockNumber garbage", sample({ blockNumber: ok("twelve") }), "unknown", /expected a hex quantity/],
    ["eth_syncing garbage", sample({ syncing: ok("yes"), blockNumber: ok("0x1") }), "unknown", /eth_syncing returned "yes"/],
    ["syncing object without highestBlock", sample({ syncing: ok({ currentBlock: "0x1" }), blockNumber: ok("0x1") }), "unknown", /highestBlock/],
    ["latest block without timestamp", sample({ blockNumber: ok("0x5"), latestBlock: ok({ number: "0x5" }) }), "unknown", /timestamp/],
    ["latest block null", sample({ blockNumber: ok("0x5"), latestBlock: ok(null) }), "unknown", /timestamp/],
  ];
  it.each(cases)("%s", (_l, s, want, reason) => {
    const st = l1State(s, rules, undefined, NOW);
    expect(st.status).toBe(want);
    expect(st.reason).toMatch(reason);
  });

  it("tolerance is configurable", () => {
    const s = sample({ blockNumber: ok("0x64"), reference: ok("0x6b") });
    expect(l1State(s, { ...rules, toleranceBlocks: 7 }, undefined, NOW).status).toBe("synced");
    expect(l1State(s, { ...rules, toleranceBlocks: 0 }, undefined, NOW).status).toBe("syncing");
  });
});

describe("progress", () => {
  it("percent, rate and time left from the previous observation", () => {
    const p = progress(600, 1000, { atMs: NOW - 120_000, current: 400 }, NOW);
    expect(p).toEqual({ current: 600, highest: 1000, percent: 60, blocksPerMinute: 100, etaMinutes: 4 });
  });
  it("no rate without a previous observation or with a stalled node", () => {
    expect(progress(5, 10, undefined, NOW)).toEqual({ current: 5, highest: 10, percent: 50 });
    expect(progress(5, 10, { atMs: NOW - 60_000, current: 5 }, NOW)).toEqual({ current: 5, highest: 10, percent: 50, blocksPerMinute: 0 });
  });
  it("carries through the L2 state and the one-line description", () => {
    const st = l2State(status("0x258", "0x3e8"), { atMs: NOW - 60_000, current: 500 }, NOW);
    expect(st.progress).toMatchObject({ current: 600, highest: 1000, percent: 60, blocksPerMinute: 100, etaMinutes: 4 });
    expect(describeState("l2", st)).toBe("l2: syncing | block 600 of 1000 | 60% | 100 blocks/min | ~4 min left");
  });
});
