/**
 * Identical reads at the head share one fetch to the node (gateway/lua/rpcstack/cache_merge.lua),
 * on the real HAProxy in front of a real EVM node (hardhat) behind a counting relay. The rule: a
 * call joins an identical call in flight only if the gateway has seen no newer head since that one
 * was sent, so no caller gets a head older than one an answer of this gateway had shown before it
 * asked, and every caller gets its own id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { startCountingRelay, type CountingRelay } from "./support/countingRelay.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { jsonRpc, waitFor } from "./support/net.js";

const KEY = "merge_Key_3fQx2LmN9pRs4TvW8yZb3CdE6gHj";
const CACHE = { maxBytes: 32 * 1024 * 1024, ...CACHE_DEFAULTS, pollIntervalMs: 200 };

let node: EvmNode;
let eth: CountingRelay;
let gw: RunningGateway;

beforeAll(async () => {
  node = await startHardhat();
  eth = await startCountingRelay(node.url);
  const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: eth.url } }];
  gw = await startGateway(chains, [{ name: "alice", key: KEY }], { cache: CACHE });
  // The head moves only when a test mines.
  await jsonRpc(node.url, "evm_setIntervalMining", [0]);
  await waitFor("a finality poll", async () => (eth.polls() > 0 ? true : undefined));
  await new Promise((r) => setTimeout(r, 300));
}, 90_000);

afterAll(async () => {
  await gw?.stop();
  await eth?.stop();
  await node?.stop();
});

const call = (method: string, params: unknown, id: unknown) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const blockNumber = (id: unknown) => call("eth_blockNumber", [], id);

async function post(body: string) {
  const res = await fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
  const text = await res.text();
  return { status: res.status, cache: res.headers.get("x-cache"), json: JSON.parse(text), text };
}
const headCalls = () => eth.calls.filter((c) => c.body.includes('"eth_blockNumber"')).length;
const atNode = (id: number) => waitFor(`call ${id} at the node`, async () => (eth.calls.some((c) => c.body === blockNumber(id)) ? true : undefined), 5_000);
const mine = async () => parseInt(await jsonRpc(node.url, "evm_mine", []).then(() => jsonRpc(node.url, "eth_blockNumber")), 16);
const hex = (n: number) => `0x${n.toString(16)}`;

/** Holds the node's answers to single eth_blockNumber calls for `ms` while `run` goes: a fetch stays in flight as the test moves the head. */
async function holdingHeadCalls(ms: number, run: () => Promise<void>) {
  eth.holdAnswer = (body) => (body.startsWith("{") && body.includes('"eth_blockNumber"') ? ms : 0);
  try {
    await run();
  } finally {
    eth.holdAnswer = undefined;
  }
}

/** A head call sent while the node is at head - 1 and held in flight, then a block mined: what an old fetch is. */
async function oldFetch(id: number) {
  const before = headCalls();
  const old = post(blockNumber(id));
  await atNode(id);
  return { before, old, head: await mine() };
}

describe("reads at the head: identical calls in flight share one fetch", () => {
  it("identical calls while one is in flight reach the node once, each answered with its own id", async () => {
    await holdingHeadCalls(600, async () => {
      const before = headCalls();
      const first = post(blockNumber(1));
      await atNode(1);
      const ids = ["a", 2, "b", 3.5, "c"];
      const rest = await Promise.all(ids.map((id) => post(blockNumber(id))));
      const lead = await first;
      expect(headCalls() - before).toBe(1);
      expect(lead.json).toEqual({ jsonrpc: "2.0", id: 1, result: expect.stringMatching(/^0x[0-9a-f]+$/) });
      rest.forEach((r, i) => {
        expect(r.status).toBe(200);
        expect(r.cache).toBe("COALESCED");
        expect(r.json).toEqual({ jsonrpc: "2.0", id: ids[i], result: lead.json.result });
      });
    });
  });

  it("once a newer head came back through the gateway, a call does not join a fetch sent before it", async () => {
    await holdingHeadCalls(1200, async () => {
      const { before, old, head } = await oldFetch(10);
      // A latest block (itself a read at the head, not held) shows the new head to a client.
      const latest = await post(call("eth_getBlockByNumber", ["latest", false], 11));
      expect(latest.json.result.number).toBe(hex(head));
      const after = post(blockNumber(12));
      await atNode(12);
      const joined = post(blockNumber(13));
      const [o, a, j] = await Promise.all([old, after, joined]);
      expect(parseInt(o.json.result, 16)).toBe(head - 1);
      expect(a.json).toEqual({ jsonrpc: "2.0", id: 12, result: hex(head) });
      expect(j.json).toEqual({ jsonrpc: "2.0", id: 13, result: hex(head) });
      expect(j.cache).toBe("COALESCED");
      expect(headCalls() - before).toBe(2);
    });
  });

  it("a newer head the merge did not fetch (a batch relayed whole) stops joins too", async () => {
    await holdingHeadCalls(1200, async () => {
      const { before, old, head } = await oldFetch(20);
      const batch = await post(`[${blockNumber(21)}]`);
      expect(batch.json).toEqual([{ jsonrpc: "2.0", id: 21, result: hex(head) }]);
      const after = await post(blockNumber(22));
      expect(after.json).toEqual({ jsonrpc: "2.0", id: 22, result: hex(head) });
      // Fetched for itself: it did not join the old one.
      expect(after.cache).toBe("MISS");
      expect(parseInt((await old).json.result, 16)).toBe(head - 1);
      // The old one, the batch and the one after: each its own.
      expect(headCalls() - before).toBe(3);
    });
  });

  it("a head read sent to the node alone is a head the merge sees: a newer one stops joins, the same one does not", async () => {
    // A read nobody joined last time goes to the node alone (only one in 8 leads a fetch): this
    // latest-block read (a spelling no other test sends) leads once, unjoined, so its next two go alone.
    const latest = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByNumber","params":[ "latest", false ]}`;
    expect((await post(latest(30))).cache).toBe("MISS");
    await holdingHeadCalls(1200, async () => {
      const { before, old, head } = await oldFetch(31);
      const alone = await post(latest(32));
      expect(alone.cache).toBeNull();
      expect(alone.json.result.number).toBe(hex(head));
      // It showed a newer head than the fetch in flight was sent at: a call after it does not join
      // that fetch (it goes to the node, by a fetch of its own or alone).
      const after = await post(blockNumber(33));
      expect(after.cache).not.toBe("COALESCED");
      expect(after.json).toEqual({ jsonrpc: "2.0", id: 33, result: hex(head) });
      expect(parseInt((await old).json.result, 16)).toBe(head - 1);
      expect(headCalls() - before).toBe(2);
    });
    // A head call spelled anew leads a fetch (the first of its kind), held in flight.
    const head = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[ ]}`;
    await holdingHeadCalls(1200, async () => {
      const before = headCalls();
      const inFlight = post(head(40));
      await waitFor("call 40 at the node", async () => (eth.calls.some((c) => c.body === head(40)) ? true : undefined), 5_000);
      // The same head as the fetch in flight knows: it stops no one from joining it.
      const alone = await post(latest(41));
      expect(alone.cache).toBeNull();
      const joined = await post(head(42));
      const lead = await inFlight;
      expect(joined).toMatchObject({ cache: "COALESCED", json: { id: 42, result: lead.json.result } });
      expect(parseInt(lead.json.result, 16)).toBe(parseInt(alone.json.result.number, 16));
      expect(headCalls() - before).toBe(1);
    });
  });

  it("pending reads and sends are never shared", async () => {
    eth.delayMs = 400;
    try {
      const before = eth.calls.length;
      const pending = (id: number) => call("eth_getBlockByNumber", ["pending", false], id);
      const answers = await Promise.all([1, 2, 3].map((id) => post(pending(id))));
      expect(eth.calls.length - before).toBe(3);
      answers.forEach((a) => expect(a.cache).toBeNull());
    } finally {
      eth.delayMs = 0;
    }
  });

  it("under concurrent callers and a head that moves every 150 ms, no answer is older than a head shown before it was asked", async () => {
    await jsonRpc(node.url, "evm_setIntervalMining", [150]);
    // Answers come back 0-80 ms after the node gave them: some after a newer one.
    eth.holdAnswer = () => Math.floor(Math.random() * 80);
    let shown = 0;
    let calls = 0;
    let merged = 0;
    const heads = new Set<number>();
    const wrong: string[] = [];
    const nodeBefore = eth.calls.length;
    try {
      const end = Date.now() + 3_000;
      await Promise.all(
        Array.from({ length: 24 }, async (_, w) => {
          for (let i = 0; Date.now() < end; i++) {
            const id = `${w}-${i}`;
            const latest = i % 3 === 2;
            const floor = shown;
            const r = await post(latest ? call("eth_getBlockByNumber", ["latest", false], id) : blockNumber(id));
            calls++;
            if (r.cache === "COALESCED") merged++;
            if (r.json.id !== id) wrong.push(`${id} answered as ${r.json.id}`);
            const head = parseInt(latest ? r.json.result.number : r.json.result, 16);
            if (head < floor) wrong.push(`${id}: head ${head} after ${floor} was shown`);
            heads.add(head);
            shown = Math.max(shown, head);
          }
        }),
      );
    } finally {
      eth.holdAnswer = undefined;
      await jsonRpc(node.url, "evm_setIntervalMining", [0]);
    }
    if (process.env.RPCSTACK_SHOW_MERGE) console.log(`merge: ${calls} calls, ${merged} merged, ${eth.calls.length - nodeBefore} at the node, ${heads.size} heads`);
    expect(wrong).toEqual([]);
    expect(heads.size).toBeGreaterThan(5);
    expect(merged).toBeGreaterThan(0);
    expect(eth.calls.length - nodeBefore).toBeLessThan(calls - merged + 1);
  }, 30_000);
});
