/**
 * The gateway's Lua programs as files of the package (gateway/lua/), and a differential fuzz of
 * their JSON reader against the nodes' (Go's encoding/json, as geth and Juno use it).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_LIMIT_DEFAULTS, type GatewayChain, type GatewayOptions } from "../gateway/build.js";
import { cacheData } from "../gateway/cache.js";
import { LUA_FILES, LUA_SOURCE_DIR, luaDataFile } from "../gateway/lua.js";
import { policyData } from "../gateway/policy.js";
import { ROOT } from "./harness.js";
import { BodyGenerator } from "./support/jsonFuzz.js";

const luaFilesIn = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".lua"))
    .map((e) => relative(dir, join(e.parentPath, e.name)));

describe("the gateway's Lua files", () => {
  it("LUA_FILES names every .lua file of gateway/lua/, so none is left out of the container or the compose export", () => {
    expect([...LUA_FILES].sort()).toEqual(luaFilesIn(join(ROOT, LUA_SOURCE_DIR)).sort());
  });
});

/*
 * Fuzz: generated bodies (test/support/jsonFuzz.ts) are read by the gateway's Lua
 * (test/lua/fuzz_reader.lua, on the Lua versions HAProxy embeds) and by the nodes' reading
 * (test/support/jsonrpc-oracle, Go's encoding/json as geth and Juno call it). Where the policy
 * lets a body through, each call a node executes must name a method the policy checked; where
 * the cache would answer, the node must take each call as a call with the method, params and id
 * the cache keyed and spliced. A fixed seed in CI; RPCSTACK_FUZZ_BODIES and RPCSTACK_FUZZ_SEED
 * run longer or other searches by hand.
 */
const BODIES = Number(process.env.RPCSTACK_FUZZ_BODIES ?? 4000);
const SEED = Number(process.env.RPCSTACK_FUZZ_SEED ?? 28);
const LUA_VERSIONS = ["lua5.3", "lua5.4"];
/** The chains the cache reads for, one per kind, and the node whose reading each must match. */
const FUZZ_CHAINS: GatewayChain[] = [
  { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://127.0.0.1:1" } },
  { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: "http://127.0.0.1:2" } },
];
const NODE_OF = { eth: "geth", strk: "juno" } as const;
/** The machine's Go, offline: the oracle uses the standard library only. */
const GO_ENV = { ...process.env, GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod", GOPROXY: "off" };

interface NodeCall { call: boolean; notification: boolean; method: string; params: string; id: string }
interface NodeReading { parsed: boolean; batch: boolean; calls: NodeCall[] | null }
interface Oracle { geth: NodeReading; juno: NodeReading; norm: (string | null)[] }
interface LuaCall { method: string; params: string; id: string }
interface LuaAnswer { batch: boolean; calls: LuaCall[] }
interface LuaReading { policy: string[][] | null; cache: Record<string, { direct: LuaAnswer | null; alias: LuaAnswer | null }> }

const fromHex = (h: string) => Buffer.from(h, "hex");

/**
 * What the fuzz found (seed 28 and a 60,000-body run with seed 7): the cache answered these from
 * its store where the node answers an error or nothing. geth refuses object and array ids; Juno
 * refuses booleans, fractions, objects and arrays and takes null for a notification; and numbers
 * JSON refuses (01, 1., 1e) make the whole body a parse error for both.
 */
const FOUND = [
  '\t{"jsonrpc":"2.0",\n"id"\r\n:true,\n"method" : "starknet_specVersion"} ',
  '\r\n{"jsonrpc"\t:  "2.0" ,"\\u0069d":[] ,"method":"net_version"}',
  '{\t"jsonrpc":  "2.0"\r\n,  "method":\r\n"starknet_getTransactionReceipt"\r\n,  "params"\r\n:["0x1F"]\r\n,  "id" :{"a":1}} ',
  '\n{"jsonrpc":"2.0",  "method"\t:"starknet_specVersion",  "id"  :1.0} ',
  '  { "jsonrpc":"2.0"\r\n,"params":  []\r\n,"method":"net_version"\r\n,"id"\r\n:\t1.\n}',
  '{"jsonrpc" :"2.0"\n,  "method"\n:"eth_getBlockTransactionCountByNumber"\n,  "params"\r\n:["0x1"]\n,  "id":1e}',
  '  [\n{"jsonrpc":"2.0"\n,"method"\n:"starknet_chainId"\n,"id":  1e}]',
  '{\t"id":01,"method"  :"eth_chainId","jsonrpc"\t:\r\n"2.0"}',
  '{"jsonrpc":"2.0","method":"starknet_specVersion","id":null}',
];

/** Each disagreement between the gateway's reading of `body` and a node's, in words. */
function disagreements(lua: LuaReading, node: Oracle, norm: (hex: string) => string | null): string[] {
  const out: string[] = [];
  if (lua.policy) {
    for (const name of ["geth", "juno"] as const) {
      for (const [i, c] of (node[name].calls ?? []).entries()) {
        if (!(c.call || c.notification)) continue;
        const checked = (lua.policy[i] ?? []).map(norm);
        if (!checked.includes(c.method)) out.push(`policy: ${name} executes call ${i} as ${fromHex(c.method)}, the policy checked ${JSON.stringify(checked.map((m) => m && fromHex(m).toString()))}`);
      }
    }
  }
  for (const [chain, answers] of Object.entries(lua.cache)) {
    const name = NODE_OF[chain as keyof typeof NODE_OF];
    const reading = node[name];
    for (const [how, a] of Object.entries(answers)) {
      if (!a) continue;
      if (a.batch !== reading.batch || a.calls.length !== (reading.calls ?? []).length) {
        out.push(`cache (${chain}, ${how}): answers ${a.calls.length} call(s)${a.batch ? " as a batch" : ""}, ${name} reads ${(reading.calls ?? []).length}${reading.batch ? " as a batch" : ""}`);
        continue;
      }
      for (const [i, c] of a.calls.entries()) {
        const n = reading.calls![i];
        const diff = [
          !n.call && `${name} does not answer it as a call`,
          norm(c.method) !== n.method && `method ${fromHex(c.method)} vs ${fromHex(n.method)}`,
          norm(c.params) !== n.params && `params ${fromHex(c.params)} vs ${fromHex(n.params)}`,
          norm(c.id) !== n.id && `id ${fromHex(c.id)} vs ${fromHex(n.id)}`,
        ].filter(Boolean);
        if (diff.length) out.push(`cache (${chain}, ${how}) call ${i}: ${diff.join("; ")}`);
      }
    }
  }
  return out;
}

describe("differential fuzz of the gateway's JSON reader against the nodes' (Go encoding/json)", () => {
  const work = mkdtempSync(join(tmpdir(), "rpcstack-fuzz-"));
  const oracle = join(work, "jsonrpc-oracle");
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  beforeAll(() => {
    execFileSync("go", ["build", "-o", oracle, "."], {
      cwd: join(ROOT, "test/support/jsonrpc-oracle"),
      env: GO_ENV,
      stdio: "pipe",
    });
    const opts = { cache: { maxBytes: 1 << 20, maxObjectBytes: 1 << 16, pollIntervalMs: 1000 } } as GatewayOptions;
    writeFileSync(join(work, "gateway_data.lua"), luaDataFile({ policy: policyData(FUZZ_CHAINS), cache: cacheData(FUZZ_CHAINS, opts) }));
  }, 120_000);

  it("the oracle is gofmt- and go vet-clean", () => {
    const dir = join(ROOT, "test/support/jsonrpc-oracle");
    expect(execFileSync("gofmt", ["-l", "."], { cwd: dir, encoding: "utf8" })).toBe("");
    execFileSync("go", ["vet", "."], { cwd: dir, env: GO_ENV, stdio: "pipe" });
  });

  /** Reads `bodies` with the gateway's Lua and the oracle; answers the disagreements per body. */
  function compare(bodies: Buffer[], lua: string): { body: Buffer; found: string[] }[] {
    const luaOut = execFileSync(lua, [join(ROOT, "test/lua/fuzz_reader.lua")], {
      input: bodies.map((b) => b.toString("hex")).join("\n") + "\n",
      env: { ...process.env, LUA_PATH: `${join(ROOT, LUA_SOURCE_DIR)}/?.lua;${work}/?.lua` },
      maxBuffer: 1 << 30,
    }).toString().trim().split("\n").map((l) => JSON.parse(l) as LuaReading);
    // Every text the Lua took is read by Go too, so the two readings compare as Go values.
    const texts = luaOut.map((r) => [
      ...(r.policy ?? []).flat(),
      ...Object.values(r.cache).flatMap((x) => [x.direct, x.alias]).flatMap((a) => a?.calls.flatMap((c) => [c.method, c.params, c.id]) ?? []),
    ]);
    const input = bodies.map((b, i) => JSON.stringify({ body: b.toString("hex"), norm: texts[i] })).join("\n") + "\n";
    const nodeOut = execFileSync(oracle, [], { input, maxBuffer: 1 << 30 }).toString().trim().split("\n").map((l) => JSON.parse(l) as Oracle);
    return bodies.map((body, i) => {
      const norms = new Map(texts[i].map((t, j) => [t, nodeOut[i].norm[j]]));
      return { body, found: disagreements(luaOut[i], nodeOut[i], (t) => norms.get(t) ?? null) };
    });
  }

  it.each(LUA_VERSIONS)("%s: bodies the fuzz found read otherwise are refused or relayed now: ids the node does not answer as calls, numbers JSON refuses", (lua) => {
    const bad = compare(FOUND.map((b) => Buffer.from(b, "latin1")), lua).filter((r) => r.found.length);
    expect(bad.map((r) => `${r.body.toString("latin1")}: ${r.found.join("; ")}`)).toEqual([]);
  });

  it.each(LUA_VERSIONS)(`%s: on ${BODIES} generated bodies (seed ${SEED}), nothing the policy allows or the cache answers is read otherwise by geth or Juno`, (lua) => {
    const gen = new BodyGenerator(SEED);
    const bodies = Array.from({ length: BODIES }, () => gen.body());
    const bad = compare(bodies, lua).filter((r) => r.found.length);
    const shown = bad.slice(0, 20).map((r) => `${JSON.stringify(r.body.toString("latin1"))}\n    ${r.found.join("\n    ")}`);
    expect(bad.length, `${bad.length} of ${BODIES} bodies read otherwise:\n${shown.join("\n")}`).toBe(0);
  }, Math.max(60_000, BODIES * 20));
});
