/**
 * The response cache on Debian's real HAProxy in front of a real EVM node (hardhat) and the
 * Starknet simulator, each behind a counting relay: every test checks what the client got and
 * how many calls reached the node.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runtimeCommand } from "../gateway/runtimeApi.js";
import type { GatewayChain } from "../gateway/build.js";
import { CACHE_DEFAULTS, MAX_FETCHES } from "../gateway/cache.js";
import { startCountingRelay, type CountingRelay } from "./support/countingRelay.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { jsonRpc, waitFor } from "./support/net.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";

const KEY = "cache_Key_7fQx2LmN9pRs4TvW8yZb3CdE6gHj";
const OTHER_KEY = "cache_Other_4hJk8LmN2pQr6StV9wXy3ZaB5cD";
/** A provider key in the node's URL path, as hosted nodes take it: it must reach no log line. */
const URL_SECRET = "v3/prov1derS3cretK3y";
const CACHE = { maxBytes: 32 * 1024 * 1024, ...CACHE_DEFAULTS, pollIntervalMs: 200 };

let node: EvmNode;
let sim: StarknetSim;
let eth: CountingRelay;
let strk: CountingRelay;
let gw: RunningGateway;

beforeAll(async () => {
  [node, sim] = await Promise.all([startHardhat(), startStarknetSim({ from: 100, to: 100, l1Accepted: 90 })]);
  [eth, strk] = await Promise.all([startCountingRelay(node.url), startCountingRelay(sim.url)]);
  const chains: GatewayChain[] = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: `${eth.url}/${URL_SECRET}` } },
    { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: strk.url } },
    { path: "raw", chainId: "RAW", kind: "evm", upstreams: { rpcHttp: eth.url }, cache: false },
    { path: "twin", chainId: "TWIN", kind: "evm", upstreams: { rpcHttp: eth.url } },
  ];
  gw = await startGateway(chains, [{ name: "alice", key: KEY }], { cache: CACHE });
  // Blocks to read, and the cache's first finality poll.
  await waitFor("8 blocks", async () => (parseInt(await jsonRpc(node.url, "eth_blockNumber"), 16) >= 8 ? true : undefined), 30_000);
  await waitFor("a finality poll", async () => (eth.polls() > 0 && strk.polls() > 0 ? true : undefined));
  await new Promise((r) => setTimeout(r, 300));
}, 90_000);

afterAll(async () => {
  await gw?.stop();
  await Promise.all([eth?.stop(), strk?.stop()]);
  await Promise.all([node?.stop(), sim?.stop()]);
});

const post = (chain: string, body: string, key = KEY, base = gw.base) =>
  fetch(`${base}/gateway/${chain}/rpc-http/${key}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const direct = async (url: string, body: string) => (await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body })).text();
const call = (method: string, params: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: "2.0", id, method, params });

/** Sends `body` and returns the answer, its X-Cache header and how many requests reached the node. */
async function through(relay: CountingRelay, chain: string, body: string) {
  const before = relay.calls.length;
  const res = await post(chain, body);
  const text = await res.text();
  return { status: res.status, text, cache: res.headers.get("x-cache"), reached: relay.calls.length - before };
}

const metrics = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics/cache`)).text();
const metric = (text: string, name: string, chain: string) => Number(text.match(new RegExp(`^rpcstack_cache_${name}\\{chain="${chain}"\\} (\\d+)$`, "m"))?.[1]);
const hex = (n: number) => `0x${n.toString(16)}`;

describe("Ethereum: final answers never reach the node twice", () => {
  it("a final block by number is fetched once, then answered byte-equal from the cache", async () => {
    const body = call("eth_getBlockByNumber", ["0x3", true]);
    const first = await through(eth, "eth", body);
    expect(first).toMatchObject({ status: 200, cache: "MISS", reached: 1 });
    expect(eth.calls.at(-1)!.body).toBe(body);
    const again = await through(eth, "eth", body);
    expect(again).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
    expect(again.text).toBe(await direct(node.url, body));
    expect(again.text).toBe(first.text);
  });

  it("a key's usage counts the answers the cache gave (st_usage gpc3), not the ones the node gave", async () => {
    const hits = async () => Number(/key=alice\/eth\/http .* gpc3=(\d+)/.exec(await runtimeCommand(join(gw.dir, "admin.sock"), "show table st_usage"))?.[1] ?? 0);
    const before = await hits();
    const body = call("eth_getBlockByNumber", ["0x4", false]);
    const got = [await through(eth, "eth", body), await through(eth, "eth", body), await through(eth, "eth", body)].map((r) => r.cache);
    expect(got).toEqual(["MISS", "HIT", "HIT"]);
    expect((await hits()) - before).toBe(2);
  });

  it("a hit carries the request's id exactly as sent, whatever it is, with the node's result byte for byte", async () => {
    const template = await direct(node.url, call("eth_getBlockByNumber", ["0x2", false], 1));
    expect((await through(eth, "eth", call("eth_getBlockByNumber", ["0x2", false], 7))).cache).toBe("MISS");
    for (const id of ["9007199254740991", '"q\\"uo\\\\te\\u2028"', '"\u2028 raw"', '"plain"', "-0", "1.5e3", "0", "-1.25E-7"]) {
      const body = `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByNumber","params":["0x2",false]}`;
      const r = await through(eth, "eth", body);
      expect(r).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
      expect(r.text).toBe(template.replace('"id":1,', `"id":${id},`));
    }
  });

  it("an id the node would refuse goes to the node: numbers as RFC 8259 writes them, strings; never null, booleans, objects or arrays", async () => {
    const body = (id: string) => `{"jsonrpc":"2.0","id":${id},"method":"eth_getBlockByNumber","params":["0x2",false]}`;
    expect(await through(eth, "eth", body("1"))).toMatchObject({ status: 200, cache: "HIT" });
    // Each twice: the first answer must not make the second a hit either (the repeated-body path).
    for (const id of ["01", "1.", "1e", "1-", "-01", "1e+", "null", "true", "false", "{}", '{"a":1}', "[]", "[1]"]) {
      for (let i = 0; i < 2; i++) {
        const r = await through(eth, "eth", body(id));
        expect(r.cache, id).not.toBe("HIT");
        expect(r.reached, id).toBe(1);
        expect(r.text, id).toBe(await direct(node.url, body(id)));
      }
    }
    // Also inside a batch whose other call is held.
    for (const id of ["01", "1.", "null", "true", "{}"]) {
      const batch = `[${body("5")},${body(id)}]`;
      const r = await through(eth, "eth", batch);
      expect(r.cache, id).not.toBe("HIT");
      expect(r.reached, id).toBe(1);
      expect(r.text, id).toBe(await direct(node.url, batch));
    }
  });

  it("50 identical misses at once reach the node once; each caller gets the answer with its own id", async () => {
    const body = (id: number) => call("eth_getBlockByNumber", ["0x6", true], id);
    const before = await metrics(gw.metricsPort);
    const n0 = eth.calls.length;
    eth.delayMs = 500;
    let answers: { status: number; cache: string | null; text: string }[];
    try {
      answers = await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const res = await post("eth", body(i));
          return { status: res.status, cache: res.headers.get("x-cache"), text: await res.text() };
        }),
      );
    } finally {
      eth.delayMs = 0;
    }
    expect(eth.calls.length - n0).toBe(1);
    const template = await direct(node.url, body(0));
    answers.forEach((a, i) => {
      expect(a.status).toBe(200);
      expect(a.text).toBe(template.replace('"id":0,', `"id":${i},`));
    });
    const after = await metrics(gw.metricsPort);
    const saved = metric(after, "coalesced_total", "eth") - metric(before, "coalesced_total", "eth");
    const hits = metric(after, "hits_total", "eth") - metric(before, "hits_total", "eth");
    expect(saved).toBeGreaterThan(0);
    expect(saved + hits).toBe(49);
    expect(answers.filter((a) => a.cache === "COALESCED")).toHaveLength(saved);
  });

  it("a caller that goes away mid-fetch keeps neither an identical caller waiting nor its place among the fetches", async () => {
    const body = (id: number) => call("eth_getBlockByNumber", ["0x8", true], id);
    const gone = new AbortController();
    eth.delayMs = 1500;
    try {
      const first = fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: body(1), signal: gone.signal }).catch(() => undefined);
      await waitFor("the first call at the node", async () => (eth.calls.some((c) => c.body === body(1)) ? true : undefined));
      gone.abort();
      await first;
      const res = await post("eth", body(2));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(await direct(node.url, body(2)));
    } finally {
      eth.delayMs = 0;
    }
    await waitFor("no fetch in flight", async () => (/^rpcstack_cache_fetches 0$/m.test(await metrics(gw.metricsPort)) ? true : undefined), 5_000);
  }, 30_000);

  it("chain id and net version are held; a hash in upper case is the same key", async () => {
    for (const m of ["eth_chainId", "net_version"]) {
      expect(await through(eth, "eth", call(m, []))).toMatchObject({ cache: "MISS", reached: 1 });
      expect(await through(eth, "eth", call(m, [], 2))).toMatchObject({ cache: "HIT", reached: 0, text: await direct(node.url, call(m, [], 2)) });
    }
    const { hash } = await jsonRpc(node.url, "eth_getBlockByNumber", ["0x1", false]);
    expect(await through(eth, "eth", call("eth_getBlockByHash", [hash, false]))).toMatchObject({ cache: "MISS", reached: 1 });
    const upper = `0x${hash.slice(2).toUpperCase()}`;
    expect(await through(eth, "eth", call("eth_getBlockByHash", [upper, false]))).toMatchObject({ cache: "HIT", reached: 0, text: await direct(node.url, call("eth_getBlockByHash", [upper, false])) });
  });

  it("never holds tags, calls, errors, nulls, extra params or spellings the node may read otherwise", async () => {
    await through(eth, "eth", call("eth_getBlockByNumber", ["0x3", true]));
    const never = [
      call("eth_getBlockByNumber", ["latest", false]),
      call("eth_getBlockByNumber", ["pending", false]),
      call("eth_getBlockByNumber", ["finalized", false]),
      call("eth_blockNumber", []),
      call("eth_call", [{ to: "0x0000000000000000000000000000000000000001", data: "0x" }, "0x1"]),
      call("eth_getBlockByNumber", ["0x3", true, "junk"]),
      call("eth_getBlockByNumber", ["0x3"]),
      call("eth_getBlockByNumber", ["0x03", true]),
      call("eth_getBlockByHash", [`0x${"ab".repeat(32)}`, false]),
      call("eth_getTransactionReceipt", [`0x${"cd".repeat(32)}`]),
    ];
    for (const [i, body] of never.entries()) {
      const a = await through(eth, "eth", body);
      const b = await through(eth, "eth", body);
      expect(a.reached + b.reached, body).toBe(2);
      expect(b.cache, body).not.toBe("HIT");
      // The node's own answer (the first four move with every block, so only the rest compare).
      if (i >= 4) expect(b.text.replace(/"id":\d+/, ""), body).toBe((await direct(node.url, body)).replace(/"id":\d+/, ""));
    }
    // The node's own error for the extra parameter, not the cached block.
    expect(JSON.parse((await through(eth, "eth", call("eth_getBlockByNumber", ["0x3", true, "junk"]))).text).error).toBeTruthy();
  });

  it("blocks, transactions and receipts above the finalized block go to the node until it is final", async () => {
    const [from] = await jsonRpc(node.url, "eth_accounts");
    const tx = await jsonRpc(node.url, "eth_sendTransaction", [{ from, to: from, value: "0x1" }]);
    const receipt = await waitFor("receipt", async () => (await jsonRpc(node.url, "eth_getTransactionReceipt", [tx])) ?? undefined);
    const n = parseInt(receipt.blockNumber, 16);
    eth.finality.finalized = n - 1;
    await new Promise((r) => setTimeout(r, 600));
    const reads = [call("eth_getTransactionReceipt", [tx]), call("eth_getTransactionByHash", [tx]), call("eth_getBlockByHash", [receipt.blockHash, false]), call("eth_getBlockByNumber", [hex(n), false])];
    for (const body of reads) {
      expect((await through(eth, "eth", body)).reached + (await through(eth, "eth", body)).reached, body).toBe(2);
    }
    eth.finality.finalized = undefined;
    await waitFor("finality past the block", async () => ((await through(eth, "eth", reads[3])).cache === "HIT" ? true : undefined), 10_000);
    for (const body of reads) {
      await through(eth, "eth", body);
      const r = await through(eth, "eth", body);
      expect(r, body).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
      expect(r.text).toBe(await direct(node.url, body));
    }
  });

  it("logs of a numbered range that ends at a final block are fetched once, then answered from the cache; past it, at a tag or by block hash they reach the node", async () => {
    const [from] = await jsonRpc(node.url, "eth_accounts");
    // A contract whose constructor logs once: PUSH1 0 PUSH1 0 LOG0 STOP.
    const tx = await jsonRpc(node.url, "eth_sendTransaction", [{ from, data: "0x60006000a000" }]);
    const receipt = await waitFor("receipt", async () => (await jsonRpc(node.url, "eth_getTransactionReceipt", [tx])) ?? undefined);
    const n = parseInt(receipt.blockNumber, 16);
    const address: string = receipt.contractAddress;
    const logs = (filter: object) => call("eth_getLogs", [filter]);
    const range = logs({ fromBlock: hex(n - 1), toBlock: hex(n), address });
    eth.finality.finalized = n - 1;
    await new Promise((r) => setTimeout(r, 600));
    expect((await through(eth, "eth", range)).reached + (await through(eth, "eth", range)).reached).toBe(2);
    eth.finality.finalized = undefined;
    await waitFor("finality past the block", async () => ((await through(eth, "eth", range)).cache === "HIT" ? true : undefined), 10_000);
    const hit = await through(eth, "eth", range);
    expect(hit).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
    expect(hit.text).toBe(await direct(node.url, range));
    expect(JSON.parse(hit.text).result).toMatchObject([{ address: address.toLowerCase(), blockNumber: hex(n), transactionHash: tx }]);
    // The same filter spelled otherwise is the same entry; the caller's id comes back.
    const spelled = call("eth_getLogs", [{ address: address.toUpperCase().replace(/^0X/, "0x"), toBlock: hex(n), fromBlock: hex(n - 1) }], "logs-7");
    expect(await through(eth, "eth", spelled)).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
    expect(JSON.parse((await through(eth, "eth", spelled)).text)).toMatchObject({ id: "logs-7", result: JSON.parse(hit.text).result });
    for (const body of [logs({ fromBlock: hex(n - 1), toBlock: "latest", address }), logs({ blockHash: receipt.blockHash }), logs({ fromBlock: hex(n - 1), toBlock: hex(n), address, limit: 1 })]) {
      expect((await through(eth, "eth", body)).reached + (await through(eth, "eth", body)).reached, body).toBe(2);
    }
  });

  it("a batch is answered from the cache when every call hits, and relayed whole otherwise", async () => {
    await through(eth, "eth", call("eth_getBlockByNumber", ["0x4", false]));
    await through(eth, "eth", call("eth_chainId", []));
    const hit = await through(eth, "eth", `[${call("eth_getBlockByNumber", ["0x4", false], "a")}, ${call("eth_chainId", [], 9)}]`);
    expect(hit).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
    const answers = JSON.parse(hit.text);
    expect(answers.map((a: any) => a.id)).toEqual(["a", 9]);
    expect(hit.text).toBe(`[${(await direct(node.url, call("eth_getBlockByNumber", ["0x4", false], "a")))},${await direct(node.url, call("eth_chainId", [], 9))}]`);
    const mixed = await through(eth, "eth", `[${call("eth_getBlockByNumber", ["0x4", false], 1)}, ${call("eth_blockNumber", [], 2)}]`);
    expect(mixed).toMatchObject({ status: 200, reached: 1 });
    expect(mixed.cache).toBeNull();
    expect(JSON.parse(mixed.text)).toHaveLength(2);
  });

  it("each chain has its own entries: the same call on another chain is fetched from its node", async () => {
    const body = call("eth_getBlockByNumber", ["0x5", false], 77);
    await through(eth, "eth", body);
    expect(await through(eth, "eth", body)).toMatchObject({ cache: "HIT", reached: 0 });
    expect(await through(eth, "twin", body)).toMatchObject({ cache: "MISS", reached: 1 });
  });

  it("a node without the finalized tag gets a block cached by number only 64 blocks below its head", async () => {
    eth.finality.noTag = true;
    try {
      await new Promise((r) => setTimeout(r, 600));
      const head = parseInt(await jsonRpc(node.url, "eth_blockNumber"), 16);
      const body = call("eth_getBlockByNumber", [hex(head - 2), false]);
      expect((await through(eth, "twin", body)).reached + (await through(eth, "twin", body)).reached).toBe(2);
    } finally {
      eth.finality.noTag = false;
    }
    await new Promise((r) => setTimeout(r, 600));
  });

  it("a chain with the cache switched off relays every call", async () => {
    const body = call("eth_getBlockByNumber", ["0x3", true]);
    for (let i = 0; i < 2; i++) expect(await through(eth, "raw", body)).toMatchObject({ status: 200, cache: null, reached: 1 });
  });

  it("a block of over 1 MiB is answered from the cache on its second request, past the gateway's buffers", async () => {
    const [from] = await jsonRpc(node.url, "eth_accounts");
    // Zero bytes keep the calldata's gas low; the block with full transactions is then ~1.2 MB of JSON.
    const tx = await jsonRpc(node.url, "eth_sendTransaction", [{ from, to: from, gas: "0x7a1200", data: `0x${"00".repeat(600 * 1024)}` }]);
    const receipt = await waitFor("big receipt", async () => (await jsonRpc(node.url, "eth_getTransactionReceipt", [tx])) ?? undefined);
    await new Promise((r) => setTimeout(r, 600));
    const body = call("eth_getBlockByNumber", [receipt.blockNumber, true]);
    expect(await through(eth, "eth", body)).toMatchObject({ status: 200, cache: "MISS", reached: 1 });
    const r = await through(eth, "eth", body);
    expect(r).toMatchObject({ status: 200, cache: "HIT", reached: 0 });
    expect(r.text.length).toBeGreaterThan(1024 * 1024);
    expect(r.text).toBe(await direct(node.url, body));
    expect(gw.build.config).toMatch(/tune\.bufsize 13107[0-9]/);
  });

  it("the key check and the method policy come first: cached calls get their 401 and 403, and nothing reaches the node", async () => {
    const body = call("eth_getBlockByNumber", ["0x3", true]);
    const before = eth.calls.length;
    const res = await post("eth", body, "wrong_Key_7fQx2LmN9pRs4TvW8yZb3CdE6gHj");
    expect(res.status).toBe(401);
    expect(res.headers.get("x-cache")).toBeNull();
    const denied = await post("eth", call("debug_traceTransaction", [`0x${"ab".repeat(32)}`], 2));
    expect(denied.status).toBe(403);
    expect(denied.headers.get("x-cache")).toBeNull();
    expect(eth.calls.length).toBe(before);
    // In a batch, the refused call is answered in place and the batch's other call is relayed to the node, not from the cache.
    const split = await post("eth", `[${body}, ${call("debug_traceTransaction", [`0x${"ab".repeat(32)}`], 2)}]`);
    expect(split.status).toBe(200);
    expect(split.headers.get("x-cache")).toBeNull();
    expect((await split.json())[1].error.code).toBe(-32601);
    expect(eth.calls.slice(before).map((c) => c.methods)).toEqual([["eth_getBlockByNumber"]]);
  });

  it("misses in flight are bounded: of 40 distinct misses at once the cache fetches at most MAX_FETCHES, the others go to the node as without it; all are answered", async () => {
    await jsonRpc(node.url, "hardhat_mine", ["0x40"]);
    await new Promise((r) => setTimeout(r, 600));
    const bodies = Array.from({ length: 40 }, (_, i) => call("eth_getBlockTransactionCountByNumber", [hex(20 + i)], i));
    const before = await metrics(gw.metricsPort);
    eth.delayMs = 300;
    let answers: { status: number; cache: string | null; text: string }[];
    try {
      answers = await Promise.all(bodies.map(async (b) => {
        const res = await post("eth", b);
        return { status: res.status, cache: res.headers.get("x-cache"), text: await res.text() };
      }));
    } finally {
      eth.delayMs = 0;
    }
    const fetched = answers.filter((a) => a.cache === "MISS").length;
    const relayed = answers.filter((a) => a.cache === null).length;
    expect(fetched).toBeGreaterThan(0);
    expect(fetched).toBeLessThanOrEqual(MAX_FETCHES);
    expect(fetched + relayed).toBe(40);
    const after = await metrics(gw.metricsPort);
    expect(metric(after, "bypassed_total", "eth") - metric(before, "bypassed_total", "eth")).toBe(relayed);
    for (const [i, a] of answers.entries()) {
      expect(a.status).toBe(200);
      expect(a.text).toBe(await direct(node.url, bodies[i]));
    }
  });

  it("the node's URL, a provider key in its path, is in no log line (the cache's own fetches and polls included)", async () => {
    expect(await through(eth, "eth", call("eth_getBlockByNumber", ["0x7", false]))).toMatchObject({ cache: "MISS", reached: 1 });
    const polls = eth.polls();
    await waitFor("another finality poll", async () => (eth.polls() > polls ? true : undefined));
    await new Promise((r) => setTimeout(r, 300));
    expect(gw.logs()).toContain("chain=eth");
    expect(gw.logs()).not.toContain(URL_SECRET);
  });

  it("counts hits, misses and bytes per chain on the private metrics port", async () => {
    const before = await metrics(gw.metricsPort);
    expect(await through(eth, "eth", call("eth_getBlockByNumber", ["0x3", true]))).toMatchObject({ cache: "HIT", reached: 0 });
    const after = await metrics(gw.metricsPort);
    expect(metric(after, "hits_total", "eth")).toBe(metric(before, "hits_total", "eth") + 1);
    expect(metric(after, "misses_total", "eth")).toBe(metric(before, "misses_total", "eth"));
    expect(metric(after, "bytes", "eth")).toBeGreaterThan(1024 * 1024);
    expect(metric(after, "entries", "raw")).toBeNaN();
  });
});

describe("Starknet: blocks and receipts once accepted on L1", () => {
  it("chain id and spec version are held", async () => {
    for (const m of ["starknet_chainId", "starknet_specVersion"]) {
      expect(await through(strk, "strk", call(m, []))).toMatchObject({ cache: "MISS", reached: 1 });
      expect(await through(strk, "strk", call(m, [], 3))).toMatchObject({ cache: "HIT", reached: 0, text: await direct(sim.url, call(m, [], 3)) });
    }
  });

  it("a held answer goes only to ids Juno answers as calls: null (a notification to Juno), booleans, fractions and objects reach the node (fuzz finding)", async () => {
    await through(strk, "strk", call("starknet_chainId", [], 4));
    expect(await through(strk, "strk", call("starknet_chainId", [], 5))).toMatchObject({ cache: "HIT", reached: 0 });
    for (const id of ["null", "true", "1.5", "1e3", '{"a":1}', "[]"]) {
      const body = `{"jsonrpc":"2.0","method":"starknet_chainId","params":[],"id":${id}}`;
      expect(await through(strk, "strk", body), id).toMatchObject({ cache: null, reached: 1 });
    }
    // A number JSON refuses makes the body a parse error at the node, not a hit.
    expect(await through(strk, "strk", '{"jsonrpc":"2.0","method":"starknet_chainId","params":[],"id":01}')).toMatchObject({ cache: null, reached: 1 });
  });

  it("a block accepted on L1 is held under positional and named params; an L2 block and latest are not", async () => {
    expect(await through(strk, "strk", call("starknet_getBlockWithTxHashes", [{ block_number: 80 }]))).toMatchObject({ cache: "MISS", reached: 1 });
    const named = call("starknet_getBlockWithTxHashes", { block_id: { block_number: 80 } }, "n");
    expect(await through(strk, "strk", named)).toMatchObject({ cache: "HIT", reached: 0 });
    for (const body of [call("starknet_getBlockWithTxHashes", [{ block_number: 95 }]), call("starknet_getBlockWithTxHashes", ["latest"]), call("starknet_getBlockWithTxHashes", [{ block_number: 80, junk: 1 }])]) {
      expect((await through(strk, "strk", body)).reached + (await through(strk, "strk", body)).reached, body).toBe(2);
    }
  });

  it("a class at a block number is held only at or below the l1_accepted block the node reports", async () => {
    const at = (n: number) => call("starknet_getClassHashAt", [{ block_number: n }, "0x123"]);
    expect(await through(strk, "strk", at(85))).toMatchObject({ cache: "MISS", reached: 1 });
    expect(await through(strk, "strk", at(85))).toMatchObject({ cache: "HIT", reached: 0, text: await direct(sim.url, at(85)) });
    expect((await through(strk, "strk", at(95))).reached + (await through(strk, "strk", at(95))).reached).toBe(2);
  });

  it("a receipt is held once its finality status is ACCEPTED_ON_L1", async () => {
    const l1 = call("starknet_getTransactionReceipt", ["0x5001"]);
    expect(await through(strk, "strk", l1)).toMatchObject({ cache: "MISS", reached: 1 });
    expect(await through(strk, "strk", l1)).toMatchObject({ cache: "HIT", reached: 0 });
    const l2 = call("starknet_getTransactionReceipt", ["0x5f01"]);
    expect((await through(strk, "strk", l2)).reached + (await through(strk, "strk", l2)).reached).toBe(2);
  });
});

describe("one key cannot empty everyone's cache", () => {
  let shared: RunningGateway;
  // Alice's 15 blocks (~3.6 KB each with their alias) fit in her half; Bob's 167 are 4x the budget.
  const BUDGET = 128 * 1024;
  beforeAll(async () => {
    await jsonRpc(node.url, "hardhat_mine", ["0x100"]);
    shared = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: eth.url } }], [{ name: "alice", key: KEY }, { name: "bob", key: OTHER_KEY }], {
      cache: { ...CACHE, maxBytes: BUDGET },
    });
    await waitFor("a finality poll", async () => ((await metrics(shared.metricsPort)).includes(`rpcstack_cache_budget_bytes ${BUDGET}`) ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(async () => shared?.stop());

  const read = async (key: string, n: number) => (await post("eth", call("eth_getBlockByNumber", [hex(n), false]), key, shared.base)).headers.get("x-cache");
  const hitRatio = async (key: string, blocks: number[]) => {
    let hits = 0;
    for (const n of blocks) if ((await read(key, n)) === "HIT") hits++;
    return hits / blocks.length;
  };

  it("a scan of 200 distinct final blocks by one key leaves another key's blocks held", async () => {
    const alice = Array.from({ length: 15 }, (_, i) => 1 + i);
    await hitRatio(KEY, alice);
    const without = await hitRatio(KEY, alice);
    expect(without).toBe(1);
    for (let n = 100; n < 300; n++) await read(OTHER_KEY, n);
    const m = await metrics(shared.metricsPort);
    expect(metric(m, "bytes", "eth")).toBeLessThanOrEqual(BUDGET);
    expect(metric(m, "evictions_total", "eth")).toBeGreaterThan(80);
    const afterScan = await hitRatio(KEY, alice);
    // With the numbers in the message: the other key's hit ratio without and after the scan.
    expect(afterScan, `alice's hit ratio: ${without} without the scan, ${afterScan} after it`).toBeGreaterThanOrEqual(0.9 * without);
  });
});

describe("a bounded cache", () => {
  let small: RunningGateway;
  beforeAll(async () => {
    small = await startGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: eth.url } }], [{ name: "alice", key: KEY }], {
      cache: { ...CACHE, maxBytes: 8 * 1024 },
      rateLimitPerSecond: 2,
    });
    await waitFor("a finality poll", async () => ((await metrics(small.metricsPort)).includes("rpcstack_cache_budget_bytes 8192") ? true : undefined));
    await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(async () => small?.stop());

  const viaSmall = async (body: string) => {
    const before = eth.calls.length;
    const res = await fetch(`${small.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    return { status: res.status, cache: res.headers.get("x-cache"), reached: eth.calls.length - before };
  };

  it("stays within its byte budget by evicting the least recently used answers", async () => {
    for (let n = 0; n < 8; n++) expect((await viaSmall(call("eth_getBlockByNumber", [hex(n), false]))).cache).toBe("MISS");
    const m = await metrics(small.metricsPort);
    expect(metric(m, "bytes", "eth")).toBeLessThanOrEqual(8192);
    expect(metric(m, "evictions_total", "eth")).toBeGreaterThan(0);
    expect(await viaSmall(call("eth_getBlockByNumber", [hex(7), false]))).toMatchObject({ cache: "HIT", reached: 0 });
    expect(await viaSmall(call("eth_getBlockByNumber", [hex(0), false]))).toMatchObject({ cache: "MISS", reached: 1 });
  });

  it("rate limits apply to cached answers too", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await viaSmall(call("eth_getBlockByNumber", [hex(7), false]))).status);
    expect(statuses).toContain(429);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(20);
  });
});
