/**
 * The bench's pure parts (it is not run in CI): the rounding rule, the peers' configurations, the
 * correctness comparison, the request mixes (run under Lua 5.1, the dialect of wrk's LuaJIT) and
 * how a peer binary is found, cached or refused.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { fig, ratio, show, spread } from "../bench/figures.js";
import { plainBind } from "../bench/gateway.js";
import { median, metricSum } from "../bench/measure.js";
import { readMixLua, relayMixLua, warmMixCalls, warmMixLua, type MixChain } from "../bench/mixes.js";
import { cacheDir, goBuildArgs, PEER_RELEASES, peerBinary, reportedVersion } from "../bench/peers/build.js";
import { erpcConfig, erpcPath, PROXYD_METHODS, proxydConfig, type PeerPolicy, type PeerUpstream } from "../bench/peers/configs.js";
import { describe as describeCorrectness, judgeAnswer, probeCalls, summarize } from "../bench/peers/correctness.js";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS } from "../gateway/build.js";

const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "rpcstack-benchtest-"));
  temps.push(d);
  return d;
};
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the bench's one rounding rule", () => {
  it("keeps three significant digits, whole units from 100 up", () => {
    expect([71.44999999999999, 2.6249, 0.88361, 1.416, 95.93, 253.2, 11432.4, 0.000456789].map(fig)).toEqual([71.4, 2.62, 0.884, 1.42, 95.9, 253, 11432, 0.000457]);
    expect(show(11432.4)).toBe("11,432");
    expect(show(undefined)).toBe("-");
    expect(ratio(95.9, 71.4)).toBe(1.34);
  });

  it("is what the medians of rounds come out as (no 71.44999999999999 in a table)", () => {
    // Two rounds whose mean is not representable: the figure README tables showed.
    const m = median([
      { rps: 8075.12, p50ms: 3.89, p99ms: 8.3, cpuUsPerRequest: 71.3 },
      { rps: 8019.55, p50ms: 3.83, p99ms: 9.07, cpuUsPerRequest: 71.6 },
    ]);
    expect(m).toEqual({ rps: 8047, p50ms: 3.86, p99ms: 8.69, cpuUsPerRequest: 71.4 });
    expect(JSON.stringify(m)).not.toMatch(/\d{5,}\.|\.\d{4,}/);
  });

  it("reports the spread over rounds", () => {
    expect(spread([0.77, 0.98, 0.88])).toEqual({ min: 0.77, median: 0.88, max: 0.98, percent: 23.9 });
  });
});

const up: PeerUpstream = { http: "http://127.0.0.1:8545", ws: "ws://127.0.0.1:8545", chainId: 31337, blockSeconds: 12 };
const policy: PeerPolicy = { key: "k3y_abc", ratePerSecond: 500, maxBodyBytes: 1 << 20, cacheBytes: 64 * 1024 * 1024 };

describe("eRPC's configuration", () => {
  const cfg = parseYaml(erpcConfig(up, { port: 4000, metricsPort: 4001 }, { certFile: "/c.pem", keyFile: "/k.pem" }, policy));

  it("listens on loopback with TLS and checks the key against its rate budget", () => {
    expect(cfg.server).toMatchObject({ httpHostV4: "127.0.0.1", httpPortV4: 4000, listenV6: false, tls: { enabled: true, certFile: "/c.pem", keyFile: "/k.pem" } });
    const [project] = cfg.projects;
    expect(project.auth.strategies).toEqual([{ type: "secret", rateLimitBudget: "per-key", secret: { id: "bench", value: "k3y_abc" } }]);
    expect(cfg.rateLimiters.budgets).toEqual([{ id: "per-key", rules: [{ method: "*", maxCount: 500, period: "second", perIP: true }] }]);
    expect(project.upstreams).toEqual([{ id: "node", endpoint: "http://127.0.0.1:8545", evm: { chainId: 31337 } }]);
    expect(erpcPath(up, "k3y_abc")).toBe("/main/evm/31337?secret=k3y_abc");
  });

  it("caches by finality in memory, never at the tip, unfinalized answers for two block times", () => {
    const { connectors, policies } = cfg.database.evmJsonRpcCache;
    expect(connectors).toEqual([{ id: "memory-cache", driver: "memory", memory: { maxItems: 100000, maxTotalSize: "64MB" } }]);
    expect(Object.fromEntries(policies.map((p: { finality: string; ttl: unknown }) => [p.finality, p.ttl]))).toEqual({ finalized: 0, unfinalized: "24s", unknown: 0 });
  });

  it("has no TLS block when asked for plain HTTP", () => {
    expect(parseYaml(erpcConfig(up, { port: 4000, metricsPort: 4001 }, undefined, policy)).server.tls).toBeUndefined();
  });
});

describe("proxyd's configuration", () => {
  const cfg = parseToml(proxydConfig(up, { port: 8080, metricsPort: 9761, wsPort: 8085 }, policy)) as Record<string, any>;

  it("takes the key as its path, an allow-list of methods for HTTP and WebSocket, a rate and its cache", () => {
    expect(cfg.authentication).toEqual({ k3y_abc: "bench" });
    expect(cfg.rpc_method_mappings).toEqual(Object.fromEntries(PROXYD_METHODS.map((m) => [m, "node"])));
    expect(cfg.ws_method_whitelist).toEqual(expect.arrayContaining(["eth_blockNumber", "eth_subscribe"]));
    expect(cfg.rpc_method_mappings.debug_traceTransaction).toBeUndefined();
    expect(cfg.rate_limit).toEqual({ base_rate: 500, base_interval: "1s" });
    expect(cfg.cache).toEqual({ enabled: true });
    expect(cfg.server).toMatchObject({ rpc_host: "127.0.0.1", rpc_port: 8080, ws_port: 8085, max_body_size_bytes: 1 << 20 });
    expect(cfg.backends.node).toMatchObject({ rpc_url: up.http, ws_url: up.ws });
  });

  it("refuses a WebSocket upstream without a port to serve it on", () => {
    expect(() => proxydConfig(up, { port: 8080, metricsPort: 9761 }, policy)).toThrow(/wsPort/);
  });

  it("allows every method the bench's mixes send", () => {
    const sent = new Set([...readMixLua(mixChain).matchAll(/"method":"(\w+)"/g), ...relayMixLua(mixChain.call).matchAll(/"method":"(\w+)"/g)].map((m) => m[1]));
    expect([...sent].filter((m) => !(m in cfg.rpc_method_mappings))).toEqual([]);
  });
});

/** Runs a generated wrk script under Lua 5.1 with wrk's request API stubbed: the bodies it would send. */
function wrkBodies(script: string, n: number): { id: number; method: string; params: unknown[] }[] {
  const dir = temp();
  writeFileSync(join(dir, "mix.lua"), script);
  writeFileSync(
    join(dir, "drive.lua"),
    `wrk = { format = function(method, path, headers, body) return body end }
dofile("${join(dir, "mix.lua")}")
for i = 1, ${n} do io.write(request(), "\\n") end
`,
  );
  const r = spawnSync("lua5.1", [join(dir, "drive.lua")], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`lua5.1: ${r.error?.message ?? r.stderr}`);
  return r.stdout.trim().split("\n").map((l) => JSON.parse(l));
}

/** A chain as bench/node.ts hands the mixes one: final blocks 20-60, two receipts, ten-block log spans over 8 pairs. */
const mixChain: MixChain = {
  oldFirst: 20,
  oldLast: 60,
  txs: ["0xaa01", "0xbb02"],
  logs: { address: "0x00000000000000000000000000000000000000c0", topic: `0x${"ab".repeat(32)}`, pairs: 8, span: 10 },
  call: { to: "0x5fbdb2315678afecb367f032d93f642f64180aa3", data: "0x70a08231" },
};

describe("the request mixes", () => {
  it("read mix: JSON-RPC bodies with an id per call, on final blocks and receipts the chain has; at most 80% a cache may keep", () => {
    const bodies = wrkBodies(readMixLua(mixChain), 4000);
    expect(bodies.map((b) => b.id)).toEqual(Array.from({ length: 4000 }, (_, i) => i + 1));
    const share = (keep: (b: (typeof bodies)[number]) => boolean) => bodies.filter(keep).length / bodies.length;
    const old = (b: (typeof bodies)[number]) => b.method === "eth_getBlockByNumber" && b.params[0] !== "latest";
    expect(share(old)).toBeGreaterThan(0.3);
    expect(share((b) => old(b) && b.params[1] === true)).toBeGreaterThan(0.03);
    expect(share((b) => b.method === "eth_getTransactionReceipt")).toBeGreaterThan(0.2);
    expect(share((b) => b.method === "eth_getLogs")).toBeGreaterThan(0.07);
    // What no cache keeps: the head and the latest block.
    const never = share((b) => b.method === "eth_blockNumber" || b.params[0] === "latest");
    expect(never).toBeGreaterThan(0.16);
    expect(never).toBeLessThan(0.24);
    for (const b of bodies.filter(old)) {
      expect(parseInt(b.params[0] as string, 16)).toBeGreaterThanOrEqual(20);
      expect(parseInt(b.params[0] as string, 16)).toBeLessThanOrEqual(60);
    }
    expect(new Set(bodies.filter((b) => b.method === "eth_getTransactionReceipt").map((b) => b.params[0]))).toEqual(new Set(["0xaa01", "0xbb02"]));
    const pairs = new Set<string>();
    for (const b of bodies.filter((b) => b.method === "eth_getLogs")) {
      const f = b.params[0] as { fromBlock: string; toBlock: string; address: string; topics: (string | null)[] };
      const [from, to] = [parseInt(f.fromBlock, 16), parseInt(f.toBlock, 16)];
      expect(to - from).toBe(9);
      expect((from - 20) % 10).toBe(0);
      expect(from).toBeGreaterThanOrEqual(20);
      expect(to).toBeLessThanOrEqual(60);
      expect(f.address).toBe(mixChain.logs.address);
      expect(f.topics[0]).toBe(mixChain.logs.topic);
      expect(f.topics[1]).toBeNull();
      expect(f.topics[2]).toMatch(/^0x0{62}0[0-7]$/);
      pairs.add(f.topics[2]!);
    }
    expect(pairs.size).toBe(8);
  });

  it("warm-up: every call of the read mix a cache may keep, each once in turn, then again", () => {
    const withoutId = (b: { method: string; params: unknown[] }) => JSON.stringify([b.method, b.params]);
    // 41 blocks both ways, 2 receipts, 4 pages x 8 pairs of logs, the chain id.
    const walk = 41 * 2 + 2 + 4 * 8 + 1;
    expect(warmMixCalls(mixChain)).toBe(walk);
    const warm = wrkBodies(warmMixLua(mixChain), walk + 3).map(withoutId);
    expect(new Set(warm.slice(0, walk)).size).toBe(walk);
    expect(warm.slice(walk)).toEqual(warm.slice(0, 3));
    const kept = wrkBodies(readMixLua(mixChain), 4000).filter((b) => b.method !== "eth_blockNumber" && b.params[0] !== "latest");
    expect(kept.map(withoutId).filter((b) => !warm.includes(b))).toEqual([]);
  });

  it("relay mix: eth_blockNumber and the chain's eth_call on latest, alternately", () => {
    const bodies = wrkBodies(relayMixLua(mixChain.call), 6);
    expect(bodies.map((b) => b.method)).toEqual(["eth_blockNumber", "eth_call", "eth_blockNumber", "eth_call", "eth_blockNumber", "eth_call"]);
    expect(bodies[1].params).toEqual([mixChain.call, "latest"]);
  });

  it("refuses what would not be a hex literal in the script, and a chain too short for its log span", () => {
    expect(() => relayMixLua({ to: '0x1"); os.exit(1) --', data: "0x" })).toThrow(/not a hex string/);
    expect(() => readMixLua({ ...mixChain, logs: { ...mixChain.logs, address: "0xzz" } })).toThrow(/not a hex string/);
    expect(() => readMixLua({ ...mixChain, oldLast: 25 })).toThrow(/more than a log span/);
  });
});

describe("correctness beside speed", () => {
  const call = { id: "probe-1", method: "eth_getBlockByNumber", params: ["0x5", false] };
  const node = { result: { number: "0x5", hash: "0xabc" } };

  it("accepts the node's answer with the caller's id", () => {
    expect(judgeAnswer(call, node, JSON.stringify({ jsonrpc: "2.0", id: "probe-1", result: { hash: "0xabc", number: "0x5" } })).problem).toBeUndefined();
  });

  it("reports a cache that answers with the id it stored", () => {
    const v = judgeAnswer(call, node, JSON.stringify({ jsonrpc: "2.0", id: 1000001, result: node.result }));
    expect(v).toMatchObject({ problem: "wrong id", detail: 'sent "probe-1", got 1000001' });
  });

  it("reports another block, an error, and what is not JSON-RPC", () => {
    expect(judgeAnswer(call, node, JSON.stringify({ jsonrpc: "2.0", id: "probe-1", result: { number: "0x6", hash: "0xdef" } })).problem).toBe("wrong result");
    expect(judgeAnswer(call, node, JSON.stringify({ jsonrpc: "2.0", id: "probe-1", error: { code: -32000, message: "x" } })).problem).toBe("error");
    expect(judgeAnswer(call, node, "<html>502</html>").problem).toBe("not JSON-RPC");
    expect(judgeAnswer(call, { error: { code: -32602 } }, JSON.stringify({ jsonrpc: "2.0", id: "probe-1", error: { code: -32602 } })).problem).toBeUndefined();
  });

  it("sends each call twice with different ids, on final data only", () => {
    const calls = probeCalls(50, ["0xaa", "0xbb"], 12);
    expect(calls).toHaveLength(12);
    for (let i = 0; i < calls.length; i += 2) {
      expect(calls[i + 1]).toMatchObject({ method: calls[i].method, params: calls[i].params });
      expect(typeof calls[i].id).toBe("number");
      expect(typeof calls[i + 1].id).toBe("string");
    }
    for (const c of calls.filter((c) => c.method === "eth_getBlockByNumber")) expect(parseInt(c.params[0] as string, 16)).toBeLessThanOrEqual(50);
  });

  it("calls a proxy whose latest lags the node's head stale, and says by how much", () => {
    const ok = { call, problem: undefined };
    const c = summarize([ok, ok], [{ nodeBefore: 10, peer: 10 }, { nodeBefore: 11, peer: 9 }, { nodeBefore: 11, peer: 12 }]);
    expect(c).toMatchObject({ ok: false, headsBehind: 1, maxBlocksBehind: 2 });
    expect(describeCorrectness(c)).toBe("STALE LATEST 1/3 (up to 2 blocks)");
    expect(describeCorrectness(summarize([ok], [{ nodeBefore: 3, peer: 3 }]))).toBe("ok (1 calls, 1 heads)");
  });
});

describe("hit counters", () => {
  it("sum a counter over its label sets, and only that counter", () => {
    const text = [
      "# TYPE erpc_cache_get_success_hit_total counter",
      'erpc_cache_get_success_hit_total{category="eth_chainId",network="evm:1"} 3',
      'erpc_cache_get_success_hit_total{category="eth_getBlockByNumber",network="evm:1"} 4.5e+01',
      'erpc_cache_get_success_hit_total_bucket{le="1"} 99',
      "proxyd_cache_hits_total 7",
    ].join("\n");
    expect(metricSum(text, "erpc_cache_get_success_hit_total")).toBe(48);
    expect(metricSum(text, "proxyd_cache_hits_total")).toBe(7);
    expect(metricSum(text, "absent_total")).toBe(0);
  });
});

describe("the gateway without TLS, for peers that cannot terminate it", () => {
  it("is the generated config with a plain public listener, and nothing else changed", () => {
    const { config } = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://127.0.0.1:8545" } }], [{ name: "b", key: "k".repeat(40) }], {
      bindAddress: "127.0.0.1", httpsPort: 8443, httpPort: 8080, metrics: { address: "127.0.0.1", port: 8404 }, certFile: "/w/both.pem", filesDir: "/w/gw", luaDir: "/w/lua",
      rateLimitPerSecond: 100, maxBodyBytes: 1 << 20, checkIntervalMs: 2000, caFile: "/ca.pem", threads: 1, maxConnections: 100, ...GATEWAY_LIMIT_DEFAULTS,
    });
    const plain = plainBind(config, "/w/both.pem");
    expect(plain).toMatch(/^\s*bind 127\.0\.0\.1:8443$/m);
    expect(plain).not.toContain("ssl crt");
    expect(plain.split("\n").filter((l, i) => l !== config.split("\n")[i])).toHaveLength(1);
    expect(() => plainBind(config, "/other.pem")).toThrow(/no longer has one bind line/);
  });
});

describe("peer binaries", () => {
  const erpc = PEER_RELEASES.erpc;

  it("pin each release as the Go pseudo-version of its release commit", () => {
    for (const r of Object.values(PEER_RELEASES)) expect(r.version).toMatch(new RegExp(`^v0\\.0\\.0-\\d{14}-${r.commit.slice(0, 12)}$`));
  });

  it("build like the projects' release builds, cached by release outside the checkout", () => {
    expect(goBuildArgs(PEER_RELEASES.proxyd, "/out/proxyd")).toEqual(["build", "-trimpath", "-ldflags", "-s -w -X main.GitVersion=v4.30.0 -X main.GitCommit=95d27e32", "-o", "/out/proxyd", "./cmd/proxyd"]);
    expect(cacheDir(erpc, { XDG_CACHE_HOME: "/c" })).toBe("/c/rpcstack/bench-peers/erpc-0.1.2");
  });

  it("read the version each binary reports", () => {
    expect(reportedVersion("erpc", "NAME:\n   erpc - eRPC service\n\nVERSION:\n   0.1.2\n\nCOMMANDS:\n")).toBe("0.1.2");
    expect(reportedVersion("proxyd", '{"time":"2026-11-24T08:14:58Z","level":"INFO","msg":"starting proxyd","version":"v4.30.0","commit":"95d27e32","date":""}')).toBe("v4.30.0");
  });

  /** A stand-in `go` that logs its calls, and answers `mod download` with `download` (JSON) and `build` by writing its -o file. */
  function fakeGo(download: object) {
    const dir = temp();
    const log = join(dir, "calls.log");
    writeFileSync(
      join(dir, "go"),
      `#!/bin/sh
echo "$*" >> ${log}
case "$1" in
  mod) printf '%s\n' '${JSON.stringify(download)}' ;;
  build) while [ "$1" != "-o" ]; do shift; done; echo '#!/bin/sh' > "$2" ;;
esac
`,
    );
    chmodSync(join(dir, "go"), 0o755);
    return { env: { PATH: `${dir}:/usr/bin:/bin`, XDG_CACHE_HOME: join(dir, "cache") }, calls: () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : []) };
  }

  it("take a prebuilt binary from the environment, and name a missing one", () => {
    const dir = temp();
    writeFileSync(join(dir, "erpc"), "");
    expect(peerBinary(erpc, { RPCSTACK_BENCH_ERPC: join(dir, "erpc") }).path).toBe(join(dir, "erpc"));
    expect(() => peerBinary(erpc, { RPCSTACK_BENCH_ERPC: join(dir, "nope") })).toThrow(`RPCSTACK_BENCH_ERPC=${join(dir, "nope")}: no such file`);
  });

  it("build from the module once, then use the cached build", () => {
    const src = temp();
    const go = fakeGo({ Path: erpc.module, Version: erpc.version, Dir: src });
    const first = peerBinary(erpc, go.env);
    expect(first.path).toBe(join(go.env.XDG_CACHE_HOME, "rpcstack/bench-peers/erpc-0.1.2/erpc"));
    expect(existsSync(first.path)).toBe(true);
    expect(peerBinary(erpc, go.env).path).toBe(first.path);
    expect(go.calls()).toEqual([`mod download -json ${erpc.module}@${erpc.version}`, goBuildArgs(erpc, `${first.path}.tmp`).join(" ")]);
  });

  it("say so when the module proxy will not serve the release, and how to give a binary instead", () => {
    const go = fakeGo({ Path: erpc.module, Version: erpc.version, Error: "403 Forbidden\n\tserver response: This module version is not available." });
    expect(() => peerBinary(erpc, go.env)).toThrow(/erpc 0\.1\.2 cannot be had from the Go module proxy: 403 Forbidden[\s\S]*This module version is not available[\s\S]*Set RPCSTACK_BENCH_ERPC to a erpc 0\.1\.2 binary to measure it \(where its project publishes release binaries and images: docs\/bench-peers\.md/);
    expect(go.calls()).toHaveLength(1);
  });
});
