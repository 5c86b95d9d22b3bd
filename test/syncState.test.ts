import { describe, expect, it } from "vitest";
import { blockNumber, describeState, l1State, l2State, progress, type L1Sample, type L2Sample, type RpcReply } from "../readiness/syncState.js";

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

describe("L2 state table (starknet_syncing + the latest block or the node's own readiness)", () => {
  // Reply shapes: Juno's Handler.Syncing (NethermindEth/juno, rpc/v*/sync.go) answers false when
  // the chain is empty (no starting block), when the highest block is not known yet, and when
  // highest <= head; otherwise an object with integer numbers (hex strings in older RPC
  // versions). Pathfinder (eqlabs/pathfinder, crates/rpc syncing) answers false within 6 blocks.
  // starknet_getBlockWithTxHashes("latest") carries block_number and timestamp (starknet-specs
  // BLOCK_HEADER); on an empty chain it fails with code 24, BLOCK_NOT_FOUND.
  const head = (n: number, ageSeconds: number): RpcReply => ok({ block_hash: "0xabc", block_number: n, timestamp: Math.floor(NOW / 1000 - ageSeconds), transactions: [] });
  const sample = (s: Partial<L2Sample>): L2Sample => ({ syncing: ok(false), ...s });
  const cases: [string, L2Sample, string, RegExp][] = [
    ["false with a fresh head: caught up", sample({ latestBlock: head(812_345, 4) }), "synced", /false; block 812345, 4s old/],
    ["false with head 0: empty chain or head not known yet", sample({ latestBlock: head(0, 1) }), "waiting", /block 0/],
    ["false with no block at all (Juno, empty database)", sample({ latestBlock: { error: { code: 24, message: "Block not found" } } }), "waiting", /no block yet/],
    ["false with a stale head (Juno before the highest block is known)", sample({ latestBlock: head(5_000, 3 * 3600) }), "syncing", /3h old/],
    ["false and the node's readiness answers 503 (Pathfinder within 6 blocks, but behind)", sample({ latestBlock: head(100, 1), ready: { status: 503 } }), "syncing", /answers 503/],
    ["false and the node's readiness answers 200", sample({ ready: { status: 200 } }), "synced", /readiness check answers 200/],
    ["readiness endpoint down: the head decides", sample({ latestBlock: head(100, 2), ready: { failure: "http://juno:6060/ready/sync unreachable (ECONNREFUSED)" } }), "synced", /block 100, 2s old/],
    ["false without a latest block: cannot tell", sample({}), "unknown", /no latest block/],
    ["integers, behind", sample({ syncing: status(90, 100), latestBlock: head(90, 1) }), "syncing", /block 90 of 100/],
    ["hex, behind (older RPC versions)", sample({ syncing: status("0x5a", "0x64") }), "syncing", /block 90 of 100/],
    ["current equals highest with a fresh head", sample({ syncing: status(100, 100), latestBlock: head(100, 3) }), "synced", /highest known block 100; block 100, 3s old/],
    ["hex, current equals highest, stale head", sample({ syncing: status("0x64", "0x64"), latestBlock: head(100, 7200) }), "syncing", /2h old/],
    ["current past highest (new head seen first)", sample({ syncing: status(101, 100), latestBlock: head(101, 1) }), "synced", /block 101, 1s old/],
    ["missing current", sample({ syncing: ok({ highest_block_num: 5 }) }), "unknown", /current_block_num/],
    ["garbage highest", sample({ syncing: status(5, "lots") }), "unknown", /highest_block_num \("lots"\)/],
    ["decimal string is not a number here", sample({ syncing: status("90", "100") }), "unknown", /current_block_num/],
    ["true is not a status", sample({ syncing: ok(true) }), "unknown", /returned true/],
    ["null", sample({ syncing: ok(null) }), "unknown", /returned null/],
    ["array", sample({ syncing: ok([1, 2]) }), "unknown", /returned \[1,2\]/],
    ["JSON-RPC error", sample({ syncing: { error: { code: -32601, message: "Method not found" } } }), "unknown", /error -32601 Method not found/],
    ["endpoint down", sample({ syncing: { failure: "http://juno:6060 unreachable (ECONNREFUSED)" } }), "unknown", /ECONNREFUSED/],
    ["latest block without a timestamp", sample({ latestBlock: ok({ block_number: 5 }) }), "unknown", /timestamp/],
    ["latest block fails otherwise", sample({ latestBlock: { error: { code: -32603, message: "internal" } } }), "unknown", /error -32603 internal/],
  ];
  it.each(cases)("%s", (_l, s, want, reason) => {
    const st = l2State(s, rules, undefined, NOW);
    expect(st.status).toBe(want);
    expect(st.reason).toMatch(reason);
  });

  it("false alone is never synced: it needs a non-zero, recent head or the node's own 200", () => {
    for (const latestBlock of [undefined, head(0, 0), head(10, 301), { error: { code: 24, message: "Block not found" } }] as (RpcReply | undefined)[]) {
      expect(l2State({ syncing: ok(false), latestBlock }, rules, undefined, NOW).status).not.toBe("synced");
    }
  });

  it("the head age limit is configurable", () => {
    const s = sample({ latestBlock: head(100, 120) });
    expect(l2State(s, { maxHeadAgeSeconds: 120 }, undefined, NOW).status).toBe("synced");
    expect(l2State(s, { maxHeadAgeSeconds: 60 }, undefined, NOW).status).toBe("syncing");
  });
});

/** geth's SyncProgress at head, as eth_syncing sends it (every field hex). */
const gethIndexing = (block: string, txLeft: string) => ({
  startingBlock: "0x0", currentBlock: block, highestBlock: block,
  syncedAccounts: "0x0", syncedAccountBytes: "0x0", syncedBytecodes: "0x0", syncedBytecodeBytes: "0x0",
  syncedStorage: "0x0", syncedStorageBytes: "0x0", healedTrienodes: "0x0", healedTrienodeBytes: "0x0",
  healedBytecodes: "0x0", healedBytecodeBytes: "0x0", healingTrienodes: "0x0", healingBytecode: "0x0",
  txIndexFinishedBlocks: "0x0", txIndexRemainingBlocks: txLeft, stateIndexRemaining: "0x0",
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
    // geth's eth_syncing (go-ethereum internal/ethapi/api.go, SyncProgress fields) stays an object
    // at head while it indexes: currentBlock == highestBlock with txIndexRemainingBlocks > 0.
    ["at head while geth indexes transactions", sample({ syncing: ok(gethIndexing("0x64", "0x1f4")), ...head(100, 10) }), "synced", /at head \(still indexing, transaction index: 500 blocks left\); block 100, 10s old/],
    ["at head while indexing, checked against the reference", sample({ syncing: ok(gethIndexing("0x64", "0x10")), ...head(100, 9999), reference: ok("0x66") }), "synced", /reference at 102 \(tolerance 6\); eth_syncing is at head/],
    ["at head while indexing, but the head is stale", sample({ syncing: ok(gethIndexing("0x64", "0x10")), ...head(100, 7200) }), "syncing", /2h old/],
    ["object at highest but no head yet: state still downloading", sample({ syncing: ok(gethIndexing("0x64", "0x0")), ...head(0, 1) }), "syncing", /state is still downloading/],
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
    const st = l2State({ syncing: status("0x258", "0x3e8") }, rules, { atMs: NOW - 60_000, current: 500 }, NOW);
    expect(st.progress).toMatchObject({ current: 600, highest: 1000, percent: 60, blocksPerMinute: 100, etaMinutes: 4 });
    expect(describeState("l2", st)).toBe("l2: syncing | block 600 of 1000 | 60% | 100 blocks/min | ~4 min left");
  });
});
