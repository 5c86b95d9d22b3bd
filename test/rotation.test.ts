/** Routing by lag: which nodes of a chain are in rotation, as the readiness service serves it to the gateway. */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCli } from "../readiness/readyArgs.js";
import { runAwait } from "../readiness/awaitRotation.js";
import { serveHealth } from "../readiness/healthServer.js";
import { rotation, rotationMetrics, type NodeSample } from "../readiness/rotation.js";
import type { NodeState } from "../readiness/syncState.js";
import { startChainStub, type ChainStub } from "./support/chainStub.js";
import { eventually } from "./support/http.js";
import { freePort, stopEach } from "./support/net.js";

const synced: NodeState = { status: "synced", reason: "eth_syncing is false" };
const sample = (node: string, head: number | undefined, over: Partial<NodeSample> = {}): NodeSample => ({ layer: "l1", node, head, state: synced, unreachable: false, ...over });

describe("rotation (pure)", () => {
  it("a node is in rotation within the tolerance of the best head among its layer's nodes, lagging past it", () => {
    const v = rotation([sample("a", 100), sample("b", 96), sample("c", 93)], { toleranceBlocks: 4 });
    expect(v.map((x) => [x.node, x.inRotation, x.lag, x.reason])).toEqual([
      ["a", true, 0, undefined],
      ["b", true, 4, undefined],
      ["c", false, 7, "lagging"],
    ]);
    expect(v[2].detail).toBe("block 93, 7 behind the best head 100 (tolerance 4)");
  });

  it("an unreachable node, one on another chain and one not synced are out with their reason; none of them sets the best head", () => {
    const v = rotation(
      [
        sample("a", 100),
        sample("gone", undefined, { unreachable: true, state: { status: "unknown", reason: "http://gone:8545 unreachable (ECONNREFUSED)" } }),
        sample("other", 5000, { chainId: "0x5" }),
        sample("behind", 100, { state: { status: "syncing", reason: "block 100 of 200" } }),
      ],
      { toleranceBlocks: 6, chainIds: { l1: "0x1" } },
    );
    expect(v.map((x) => [x.node, x.inRotation, x.reason])).toEqual([
      ["a", true, undefined],
      ["gone", false, "unreachable"],
      ["other", false, "wrong_chain"],
      ["behind", false, "not_synced"],
    ]);
    expect(v[0].bestHead).toBe(100);
    expect(v[1].detail).toMatch(/ECONNREFUSED/);
  });

  it("the layers are judged apart", () => {
    const v = rotation([sample("geth", 20), { ...sample("juno", 900), layer: "l2" }], { toleranceBlocks: 2 });
    expect(v.every((x) => x.inRotation && x.lag === 0)).toBe(true);
  });

  it("metrics: in rotation, lag, head and the reason out, per node", () => {
    const text = rotationMetrics(rotation([sample("a", 100), sample("b", 90)], { toleranceBlocks: 2 }), { l1: "eth" });
    expect(text).toContain('rpcstack_node_in_rotation{layer="l1",node="a",chain="eth"} 1');
    expect(text).toContain('rpcstack_node_in_rotation{layer="l1",node="b",chain="eth"} 0');
    expect(text).toContain('rpcstack_node_lag_blocks{layer="l1",node="b",chain="eth"} 10');
    expect(text).toContain('rpcstack_node_out_reason{layer="l1",node="b",chain="eth",reason="lagging"} 1');
    expect(text).toContain('rpcstack_node_out_reason{layer="l1",node="b",chain="eth",reason="unreachable"} 0');
    expect(text).toContain("# TYPE rpcstack_node_lag_blocks gauge");
  });
});

describe("rpcstack-ready with several nodes per layer", () => {
  let a: ChainStub;
  let b: ChainStub;
  let other: ChainStub;
  beforeAll(async () => {
    [a, b, other] = [await startChainStub("0x1"), await startChainStub("0x1"), await startChainStub("0x5")];
  });
  afterAll(() => stopEach(a, b, other));

  it("refuses two unnamed nodes of one host, and an --await naming no node", () => {
    expect(() => parseCli(["--l1", "http://geth:8545", "--l1", "http://geth:8546"])).toThrow('--l1: two nodes are named "geth"; name each one (--l1 NODE=URL)');
    expect(() => parseCli(["--l1", "a=http://a:1", "--await", "l1/b"])).toThrow("--await names l1/b, which no --l1 does");
    expect(() => parseCli(["--l1", "a=http://a:1", "--l1-chain-id", "one"])).toThrow('--l1-chain-id must be a hex chain id like 0xaa36a7 (got "one")');
  });

  it("--serve: a node that lags past the tolerance or stops answering leaves rotation and comes back on its own; the layer stays up while one node is fit", async () => {
    const port = await freePort();
    const h = serveHealth(parseCli(["--l1", `a=${a.url}`, "--l1", `b=${b.url}`, "--l1", `c=${other.url}`, "--l1-chain-id", "0x1", "--tolerance-blocks", "2", "--chain-name", "l1=eth", "--serve", String(port), "--serve-host", "127.0.0.1", "--interval-seconds", "0.2"]));
    const get = async (path: string) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: r.status, body: r.headers.get("content-type")?.includes("json") ? await r.json() : await r.text() };
    };
    try {
      await h.ready;
      await eventually("both in rotation", async () => [(await get("/ready/l1/a")).status, (await get("/ready/l1/b")).status], (s) => s.join() === "200,200");
      const wrong = await get("/ready/l1/c");
      expect(wrong.status).toBe(503);
      expect(wrong.body).toMatchObject({ reason: "wrong_chain", detail: "answers chain id 0x5, not 0x1" });
      b.setHead(95);
      const lagging = await eventually("b lagging", () => get("/ready/l1/b"), (r) => r.status === 503);
      expect(lagging.body).toMatchObject({ reason: "lagging", lag: 5, bestHead: 100 });
      expect((await get("/ready/l1")).status).toBe(200);
      b.setHead(100);
      await eventually("b back", () => get("/ready/l1/b"), (r) => r.status === 200);
      a.freeze();
      const gone = await eventually("a unreachable", () => get("/ready/l1/a"), (r) => r.status === 503, 5000);
      expect(gone.body.reason).toBe("unreachable");
      expect((await get("/ready/l1/b")).status).toBe(200);
      const metrics = await get("/metrics");
      expect(metrics.body).toContain('rpcstack_node_out_reason{layer="l1",node="a",chain="eth",reason="unreachable"} 1');
      expect(metrics.body).toContain('rpcstack_node_in_rotation{layer="l1",node="b",chain="eth"} 1');
      a.freeze(false);
      await eventually("a back", () => get("/ready/l1/a"), (r) => r.status === 200);
      expect((await get("/ready/l1/z")).status).toBe(404);
    } finally {
      h.stop();
      a.freeze(false);
      b.setHead(100);
    }
  }, 30_000);

  const awaited = async (args: string[]) => {
    const out = new PassThrough();
    let text = "";
    out.on("data", (d) => (text += d));
    const code = await runAwait(parseCli([...args, "--interval-seconds", "0.1"]), out);
    return { code, text };
  };

  it("--await passes once the node has stayed in rotation for the hold time, and not while it lags behind a node that serves", async () => {
    b.setHead(90);
    setTimeout(() => b.setHead(100), 1500);
    const t0 = Date.now();
    const { code, text } = await awaited(["--l1", `a=${a.url}`, "--l1", `b=${b.url}`, "--tolerance-blocks", "2", "--await", "l1/b", "--hold-seconds", "0.5", "--timeout-minutes", "1"]);
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    expect(text).toMatch(/l1\/b out of rotation, lagging: block 90, 10 behind the best head 100/);
    expect(text).toMatch(/l1\/b in rotation for 0.5 s: the next node may go/);
  }, 30_000);

  it("--await passes at once when no other node of the layer is in rotation (a first deployment), and fails after its timeout otherwise", async () => {
    a.freeze();
    try {
      const first = await awaited(["--l1", `a=${a.url}`, "--l1", `b=${b.url}`, "--await", "l1/b", "--timeout-minutes", "1"]);
      expect(first.code).toBe(0);
      expect(first.text).toContain("no other node of l1 is in rotation");
    } finally {
      a.freeze(false);
    }
    b.setHead(50);
    try {
      const late = await awaited(["--l1", `a=${a.url}`, "--l1", `b=${b.url}`, "--await", "l1/b", "--timeout-minutes", "0.02"]);
      expect(late.code).toBe(1);
      expect(late.text).toMatch(/l1\/b was not in rotation within 0.02 min .*a still serve/);
    } finally {
      b.setHead(100);
    }
  }, 30_000);
});
