/**
 * Starknet spec versions on Debian's real HAProxy with the generated configuration: each versioned
 * path reaches that version's path on every node (Pathfinder's and Juno's real paths, served by the
 * simulator), the unversioned path the pinned one, and any other version a 404 that never reaches a node.
 */
import { RpcProvider } from "starknet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createClient } from "../client/index.js";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import type { GatewayChain, SpecVersions } from "../gateway/build.js";
import { SPEC_VERSIONS } from "../config/releases.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { eventually, wsRoundTrip } from "./support/http.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";
import { stopEach } from "./support/net.js";

const KEY = "gw_spec_key_0123456789abcdefghijkLMNOP";
const ANSWERS: Record<string, string> = { v0_8: "0.8.1", v0_9: "0.9.0", v0_10: "0.10.0" };
const VERSIONS = Object.keys(ANSWERS);

/** A client's served versions as config/releases.ts records them, limited to those above. */
const served = (client: "juno" | "pathfinder"): SpecVersions => {
  const all = SPEC_VERSIONS[client].at(-1)!.versions;
  return { pinned: "v0_10", paths: Object.fromEntries(VERSIONS.map((v) => [v, all[v]])) };
};
/** What a node of that client answers where: each version's HTTP and WebSocket path. */
const simPaths = (spec: SpecVersions, kind: "http" | "ws") => Object.fromEntries(VERSIONS.map((v) => [spec.paths[v][kind], ANSWERS[v]]));

const PF = served("pathfinder");
const JUNO = served("juno");
let pf: StarknetSim;
let junos: StarknetSim[];
let behind: StarknetSim;
let gw: RunningGateway;

beforeAll(async () => {
  pf = await startStarknetSim({ from: 5, to: 5, specVersions: simPaths(PF, "http"), wsSpecVersions: simPaths(PF, "ws") });
  junos = await Promise.all([1, 2].map(() => startStarknetSim({ from: 5, to: 5, specVersions: simPaths(JUNO, "http") })));
  // Far behind its chain's head: its readiness answers 503 until it catches up, which it never does here.
  behind = await startStarknetSim({ from: 1, to: 1000, specVersions: simPaths(JUNO, "http") });
  const nodes = junos.map((j, i) => ({ name: `juno-${i + 1}`, rpcHttp: `${j.url}/v0_10`, healthUrl: `${j.url}/ready/sync` }));
  const chains: GatewayChain[] = [
    { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: `${pf.url}/rpc/v0_10`, rpcWs: `${pf.url.replace("http", "ws")}/ws/rpc/v0_10` }, specVersions: PF, denyMethods: ["starknet_getEvents"] },
    { path: "strkd", chainId: "STRKD", kind: "starknet", upstreams: { rpcHttp: `${behind.url}/v0_10` }, healthUrl: `${behind.url}/ready/sync`, specVersions: JUNO },
    { path: "strks", chainId: "STRKS", kind: "starknet", upstreams: { rpcHttp: nodes[0].rpcHttp }, healthUrl: nodes[0].healthUrl, nodes, specVersions: JUNO },
  ];
  // HAProxy 3.2 where Docker runs (the production line; the address limits need 2.8+), else the host's.
  gw = await startGateway(chains, [{ name: "alice", key: KEY }], { cache: { maxBytes: 8 * 1024 * 1024, ...CACHE_DEFAULTS, pollIntervalMs: 200 } });
}, 300_000);

afterAll(async () => {
  await stopEach(gw, pf, behind, ...(junos ?? []));
});

const call = async (path: string, method: string, key = KEY) => {
  const r = await fetch(`${gw.base}/gateway/${path.replace("KEY", key)}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }) });
  return { status: r.status, body: (await r.json()) as any };
};

describe("Starknet spec versions on the gateway's paths", () => {
  it("each versioned path answers under its version, from the node's path for it; the unversioned path under the pinned one", async () => {
    expect((await call("strk/rpc-http/KEY", "starknet_specVersion")).body.result).toBe("0.10.0");
    for (const v of VERSIONS) {
      const r = await call(`strk/rpc-http/KEY/${v}`, "starknet_specVersion");
      expect(r.body.result, v).toBe(ANSWERS[v]);
    }
    // The unversioned answer is cached; another version's call is still its own answer.
    expect((await call("strk/rpc-http/KEY/v0_9", "starknet_specVersion")).body.result).toBe("0.9.0");
    expect(new Set(pf.calls.map((c) => c.path))).toEqual(new Set(["/rpc/v0_8", "/rpc/v0_9", "/rpc/v0_10"]));
  });

  it("a version no node serves gets a JSON-RPC 404 naming the versions served, and never reaches a node", async () => {
    // The cache's finality polls (every 200 ms here) are not the client's calls.
    const clientCalls = () => pf.calls.filter((c) => !c.agent?.includes("cache-poll")).length;
    const before = clientCalls();
    for (const path of ["strk/rpc-http/KEY/v0_7", "strk/rpc-http/KEY/v0_9/extra", "strk/rpc-http/KEY/latest"]) {
      const r = await call(path, "starknet_specVersion");
      expect(r.status, path).toBe(404);
      expect(r.body.error.message, path).toBe("unknown JSON-RPC spec version; STRK serves v0_8, v0_9, v0_10 (the path without a version: v0_10)");
    }
    expect(clientCalls()).toBe(before);
  });

  it("the key check and the method policy hold on versioned paths", async () => {
    expect((await call("strk/rpc-http/KEY/v0_9", "starknet_chainId", "wrong_key_0123456789abcdefghijklmno")).status).toBe(401);
    expect((await call("strk/rpc-http/KEY/v0_9", "starknet_chainId")).status).toBe(200);
    const denied = await call("strk/rpc-http/KEY/v0_9", "starknet_getEvents");
    expect(denied.status).toBe(403);
    expect(pf.calls.some((c) => c.method === "starknet_getEvents")).toBe(false);
  });

  it("a batch holding a refused call keeps its version: its allowed calls reach the version's node path, on one node and on several", async () => {
    // starknet_getEvents is denied on strk (its denyMethods), devnet_mint on every Starknet chain.
    const batch = (path: string, denied: string) => fetch(`${gw.base}/gateway/${path.replace("KEY", KEY)}`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "starknet_specVersion", params: [] }, { jsonrpc: "2.0", id: 2, method: denied, params: [] }]),
    }).then((r) => r.json() as Promise<any[]>);
    // Answers in a batch come in any order (JSON-RPC 2.0): each is found by its id.
    const byId = (answers: any[], id: number) => answers.find((a) => a.id === id);
    const one = await batch("strk/rpc-http/KEY/v0_9", "starknet_getEvents");
    expect(byId(one, 1), JSON.stringify(one)).toMatchObject({ result: "0.9.0" });
    expect(byId(one, 2)).toMatchObject({ error: { code: -32601 } });
    const before = junos.map((j) => j.calls.length);
    const several = await batch("strks/rpc-http/KEY/v0_8", "devnet_mint");
    expect(byId(several, 1), JSON.stringify(several)).toMatchObject({ result: "0.8.1" });
    const reached = junos.flatMap((j, i) => j.calls.slice(before[i])).filter((c) => c.path !== "/v0_10");
    expect(reached.map((c) => `${c.path} ${c.method}`), JSON.stringify(reached)).toEqual(["/v0_8 starknet_specVersion"]);
  });

  it("a versioned path is closed while the chain's node is not synced, as the unversioned one is", async () => {
    // HAProxy counts a node in until its first checks have failed.
    await eventually("STRKD's node out of rotation", async () => (await call("strkd/rpc-http/KEY", "starknet_chainId")).status, (s) => s === 503);
    for (const path of ["strkd/rpc-http/KEY/v0_9", "strkd/rpc-http/KEY"]) {
      const r = await call(path, "starknet_blockNumber");
      expect(r.status, path).toBe(503);
      expect(r.body.error.message, path).toMatch(/STRKD node unavailable or not synced/);
    }
    // Only the response cache's own finality polls reach it (at the pinned version's path).
    expect(behind.calls.filter((c) => c.method === "starknet_blockNumber")).toEqual([]);
  });

  it("a chain of two nodes relays each version to that version's path on whichever node answers", async () => {
    const blockNumber = (v: string) => call(`strks/rpc-http/KEY/${v}`, "starknet_blockNumber");
    await eventually("the nodes in rotation", async () => (await blockNumber("v0_10")).status, (s) => s === 200);
    const before = junos.map((j) => j.calls.length);
    for (let i = 0; i < 6; i++) expect((await blockNumber("v0_9")).body.result).toBe(5);
    // Health checks and the cache's polls ask the pinned version (/v0_10) meanwhile: the rest is ours.
    expect(junos.flatMap((j, i) => j.calls.slice(before[i]).map((c) => c.path)).filter((p) => p !== "/v0_10")).toEqual(Array(6).fill("/v0_9"));
  });

  it("the WebSocket path takes a version too, reaching the node's WebSocket path for it", async () => {
    const ask = (suffix: string) => wsRoundTrip(new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/strk/rpc/${KEY}${suffix}?secret=null`), { jsonrpc: "2.0", id: 7, method: "starknet_specVersion", params: [] });
    expect((await ask("")).result).toBe("0.10.0");
    expect((await ask("/v0_8")).result).toBe("0.8.1");
    expect(pf.calls.filter((c) => c.path.startsWith("/ws/")).map((c) => c.path)).toEqual(["/ws/rpc/v0_10", "/ws/rpc/v0_8"]);
  });

  it("starknet.js 7, which takes spec 0.7 or 0.8 and asks the node which, works through the v0_8 path and refuses the unversioned one", async () => {
    const provider = await RpcProvider.create({ nodeUrl: `${gw.base}/gateway/strk/rpc-http/${KEY}/v0_8` });
    expect(await provider.getSpecVersion()).toBe("0.8");
    expect(await provider.getBlockNumber()).toBe(5);
    expect(pf.calls.filter((c) => c.method === "starknet_blockNumber").map((c) => c.path)).toEqual(["/rpc/v0_8"]);
    await expect(RpcProvider.create({ nodeUrl: `${gw.base}/gateway/strk/rpc-http/${KEY}` })).rejects.toThrow(/Unable to detect specification version/);
  });

  it("the package's client takes a spec version per chain and builds the path, over HTTP and WebSocket", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: ["STRK", "STRKS"], specVersions: { STRK: "v0_9" }, WebSocket: WebSocket as any });
    expect(await client.sendRelay({ chainId: "STRK", method: "starknet_specVersion" })).toBe("0.9.0");
    expect(await client.sendRelayWs({ chainId: "STRK", method: "starknet_specVersion" })).toBe("0.9.0");
    expect(await client.sendRelay({ chainId: "STRKS", method: "starknet_specVersion" })).toBe("0.10.0");
    expect(() => createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "STRK", specVersions: { STRK: "0.9" } })).toThrow(/spec version "0.9" for STRK must be spelled as the nodes name it, like "v0_9"/);
  });
});
