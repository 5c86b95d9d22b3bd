/**
 * The response cache when the chain under it changes (a `geth --dev` restarted in memory, a node
 * reset): Debian's real HAProxy in front of a real EVM node (hardhat) behind a counting relay.
 * Nothing of the old chain may be served once the node holds another one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { startCountingRelay, type CountingRelay } from "./support/countingRelay.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { jsonRpc, waitFor } from "./support/net.js";

const KEY = "chain_Key_3kLm9NpQ2rSt5VwX8yZa4BcD7eFg";
let node: EvmNode;
let relay: CountingRelay;
let gw: RunningGateway;

beforeAll(async () => {
  node = await startHardhat();
  relay = await startCountingRelay(node.url);
  gw = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: relay.url } }], [{ name: "alice", key: KEY }], {
    cache: { maxBytes: 8 * 1024 * 1024, ...CACHE_DEFAULTS, pollIntervalMs: 200 },
  });
}, 90_000);

afterAll(async () => {
  await gw?.stop();
  await relay?.stop();
  await node?.stop();
});

const hex = (n: number) => `0x${n.toString(16)}`;
const call = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });
const direct = async (body: string) => (await fetch(node.url, { method: "POST", headers: { "Content-Type": "application/json" }, body })).text();

async function through(body: string) {
  const before = relay.calls.length;
  const res = await fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
  return { status: res.status, text: await res.text(), cache: res.headers.get("x-cache"), reached: relay.calls.length - before };
}

const changes = async () =>
  Number(/^rpcstack_cache_chain_changes_total\{chain="eth"\} (\d+)$/m.exec(await (await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics/cache`)).text())?.[1]);

/** Waits until the cache has polled the node `n` more times (each poll reads its final block). */
async function polled(n = 2) {
  const start = relay.polls();
  await waitFor(`${n} finality polls`, async () => (relay.polls() >= start + n + 1 ? true : undefined), 10_000);
}

/** Blocks 1..10 by number and by hash, and a transaction and its receipt, each read until it is held. */
async function holdChain(): Promise<Map<string, string>> {
  const [from] = await jsonRpc(node.url, "eth_accounts");
  const tx = await jsonRpc(node.url, "eth_sendTransaction", [{ from, to: from, value: "0x1" }]);
  await waitFor("the receipt", async () => (await jsonRpc(node.url, "eth_getTransactionReceipt", [tx])) ?? undefined);
  await jsonRpc(node.url, "hardhat_mine", ["0x10"]);
  await polled();
  const bodies: string[] = [call("eth_getTransactionByHash", [tx]), call("eth_getTransactionReceipt", [tx])];
  for (let n = 1; n <= 10; n++) {
    const { hash } = await jsonRpc(node.url, "eth_getBlockByNumber", [hex(n), false]);
    bodies.push(call("eth_getBlockByNumber", [hex(n), false]), call("eth_getBlockByHash", [hash, false]));
  }
  const old = new Map<string, string>();
  for (const body of bodies) {
    await through(body);
    const r = await through(body);
    expect(r, body).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
    old.set(body, r.text);
  }
  return old;
}

/** Every read answered as the node now answers it, none with the old chain's answer. */
async function expectNewChain(old: Map<string, string>, label: string) {
  let stale = 0;
  for (const [body, was] of old) {
    for (let i = 0; i < 2; i++) {
      const r = await through(body);
      const now = await direct(body);
      if (r.text === was && now !== was) stale++;
      expect(r.status, body).toBe(200);
      expect(r.text, `${label}: ${body}`).toBe(now);
    }
  }
  expect(stale, `${label}: answers of the old chain`).toBe(0);
}

describe("a chain that changes under the gateway", () => {
  it("a node reset to genesis: no old block, transaction or receipt is served, by number, hash or repeated body; later the new chain's own", async () => {
    const old = await holdChain();
    const before = await changes();
    await jsonRpc(node.url, "hardhat_reset", []);
    await polled();
    expect(await changes()).toBe(before + 1);
    // The node is back near block 0: blocks 1..10 do not exist yet or are new ones.
    for (const [body, was] of old) {
      const r = await through(body);
      expect(r.cache, body).not.toBe("HIT");
      expect(r.text, body).not.toBe(was);
    }
    // Past the old numbers: each block is the new chain's, also when asked twice.
    await jsonRpc(node.url, "hardhat_mine", ["0x20"]);
    await polled();
    await expectNewChain(old, "after the reset");
  });

  it("a chain replaced while the gateway did not look (its polls held back) is told apart by its final block's hash", async () => {
    const old = await holdChain();
    const before = await changes();
    let release = () => {};
    relay.finality.hold = new Promise<void>((r) => (release = r));
    try {
      // Let the next poll reach the hold, then replace the chain with a longer one.
      await new Promise((r) => setTimeout(r, 600));
      await jsonRpc(node.url, "hardhat_reset", []);
      await jsonRpc(node.url, "hardhat_mine", ["0x40"]);
    } finally {
      relay.finality.hold = undefined;
      release();
    }
    await polled();
    expect(await changes()).toBe(before + 1);
    await expectNewChain(old, "after the replacement");
  });
});
