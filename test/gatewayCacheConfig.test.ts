/** What the generated configuration holds for the response cache, per chain and option (pure). */
import { describe, expect, it } from "vitest";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayChain, type GatewayOptions } from "../gateway/build.js";
import { CACHE_DEFAULTS, MAX_FETCHES } from "../gateway/cache.js";

const OPTS: GatewayOptions = {
  bindAddress: "127.0.0.1", httpsPort: 8443, httpPort: 8080, metrics: { address: "127.0.0.1", port: 8405 },
  certFile: "/c/gw.pem", filesDir: "/g", luaDir: "/l", rateLimitPerSecond: 100, maxBodyBytes: 65536, checkIntervalMs: 1000,
  caFile: "/etc/ssl/certs/ca-certificates.crt", maxConnections: 1000, ...GATEWAY_LIMIT_DEFAULTS,
  cache: { maxBytes: 64 << 20, ...CACHE_DEFAULTS },
};
const CHAINS: GatewayChain[] = [
  { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://geth:8545" } },
  { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: "http://juno:6060/rpc/v0_9" } },
  { path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: "http://hub:26657", rest: "http://hub:1317" } },
];

describe("the cache in the generated configuration", () => {
  it("covers evm and starknet chains over HTTP, never cosmos, and fetches misses through each chain's relay backend", () => {
    const b = buildGateway(CHAINS, [], OPTS);
    expect(b.config).toContain("lua-load /l/cache.lua");
    expect(b.config).toMatch(/http-request lua\.rpc_cache_lookup eth if/);
    expect(b.config).toMatch(/http-request lua\.rpc_cache_lookup strk if/);
    expect(b.config).not.toMatch(/rpc_cache_lookup hub/);
    expect(b.files["gateway_data.lua"]).toContain('strk = { kind = "starknet", depth = 0 }');
    const fetchListener = /frontend cache_fetch\n([\s\S]*?)\n\n/.exec(b.config)![1];
    expect(fetchListener).toContain("bind abns@rpcstack-cache-8443");
    expect(fetchListener).toContain("use_backend be_eth_rpc if { path /eth }");
    expect(fetchListener).toContain("use_backend be_strk_rpc if { path /strk }");
    expect(fetchListener).not.toContain("hub");
    // The httpclient reaches no node itself: it needs no CA bundle or resolver of its own.
    expect(b.config).not.toContain("httpclient.");
    expect(b.config).toContain("use-service lua.rpc_cache_metrics if { path /metrics/cache }");
  });

  it("is switched off per chain or as a whole", () => {
    const off = buildGateway(CHAINS.map((c) => (c.path === "eth" ? { ...c, cache: false } : c)), [], OPTS);
    expect(off.config).not.toMatch(/rpc_cache_lookup eth/);
    expect(off.config).toMatch(/rpc_cache_lookup strk/);
    const none = buildGateway(CHAINS, [], { ...OPTS, cache: undefined });
    expect(none.config).not.toMatch(/cache\.lua|rpc_cache/);
    expect(none.files["gateway_data.lua"]).not.toContain("cache");
  });

  it("an https upstream's URL (a secret when it holds a provider key) stays in haproxy.cfg; the budgets reach the Lua", () => {
    const b = buildGateway([{ path: "ext", chainId: "EXT", kind: "evm", upstreams: { rpcHttp: "https://rpc.example.net/v1/s3cret" } }], [], OPTS);
    expect(b.config).toContain("http-request set-uri /v1/s3cret");
    const data = b.files["gateway_data.lua"];
    expect(data).not.toContain("rpc.example.net");
    expect(data).not.toContain("s3cret");
    for (const line of [`budget = ${64 << 20},`, `maxObject = ${CACHE_DEFAULTS.maxObjectBytes},`, `pollMs = ${CACHE_DEFAULTS.pollIntervalMs},`]) expect(data).toContain(line);
    // Answers in flight: at most MAX_FETCHES fetches and a sixteenth of the budget, at least one largest answer.
    expect(data).toMatch(new RegExp(`fetch = \\{ .*max = ${MAX_FETCHES}, bytes = ${CACHE_DEFAULTS.maxObjectBytes} \\}`));
    const big = buildGateway([{ path: "ext", chainId: "EXT", kind: "evm", upstreams: { rpcHttp: "http://geth:8545" } }], [], { ...OPTS, cache: { ...OPTS.cache!, maxBytes: 256 << 20 } });
    expect(big.files["gateway_data.lua"]).toContain(`bytes = ${16 << 20} }`);
  });
});
