/** What the generated configuration holds for quotas (pure): the map it reads, the table and counter, the WebSocket filter's counter. */
import { describe, expect, it } from "vitest";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayChain, type GatewayOptions } from "../gateway/build.js";

const OPTS: GatewayOptions = {
  bindAddress: "127.0.0.1", httpsPort: 8443, httpPort: 8080, metrics: { address: "127.0.0.1", port: 8405 },
  certFile: "/c/gw.pem", filesDir: "/g", luaDir: "/l", rateLimitPerSecond: 100, maxBodyBytes: 65536, checkIntervalMs: 1000,
  caFile: "/etc/ssl/certs/ca-certificates.crt", maxConnections: 1000, ...GATEWAY_LIMIT_DEFAULTS,
};
const CHAINS: GatewayChain[] = [
  { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://geth:8545", rpcWs: "ws://geth:8546" } },
  { path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: "http://hub:26657", rest: "http://hub:1317" }, hostnames: { tendermintRpc: "rpc.hub.example" } },
];

describe("quotas in the generated configuration", () => {
  it("reads the quota map by key name, tracks the period's entry in sc5 of st_quota, and writes the map as `<name> <calls> <per>` lines", () => {
    const b = buildGateway(CHAINS, [], OPTS, undefined, [{ name: "alice", calls: 1000, per: "day" }, { name: "web", calls: 9, per: "month" }]);
    expect(b.files["quotas.map"]).toBe("# <name> <calls> <day|month>\nalice 1000 day\nweb 9 month\n");
    expect(b.config).toContain("tune.stick-counters 7");
    expect(b.config).toContain("http-request set-var(txn.quota) var(txn.keyname),map(/g/quotas.map) if");
    expect(b.config).toContain("http-request track-sc5 var(txn.quota_entry) table st_quota");
    expect(b.config).toMatch(/backend st_quota\n\s+stick-table type string len 88 size 100k expire 24d store gpc\(1\)/);
    expect(b.config).toContain("lua-load /l/quotas.lua");
    expect(b.config).toMatch(/http-after-response set-header RateLimit-Remaining %\[var\(txn.quota_left\)\] if/);
    // The 429 comes after the policy has counted a batch's calls, never before the body is read.
    expect(b.config.indexOf("lua.rpc_policy")).toBeLessThan(b.config.indexOf("quota exceeded"));
    expect(b.config).toMatch(/http-request return status 429 content-type application\/json hdr Retry-After %\[var\(txn.quota_reset_in\)\] lf-string/);
  });

  it("counts WebSocket messages against the key's quota (sc5), and none on public hostnames, which have no key", () => {
    const c = buildGateway(CHAINS, [], OPTS).config;
    const filters = [...c.matchAll(/filter lua\.ws_limit (\S+) .* (\S+) (\S+)$/gm)].map((m) => [m[1], m[2], m[3]]);
    expect(filters).toContainEqual(["eth", "4", "5"]);
    expect(filters).toContainEqual(["hub", "-", "-"]);
  });

  it("does not depend on the quotas: haproxy.cfg is the same with or without them, only the map differs", () => {
    const a = buildGateway(CHAINS, [], OPTS, undefined, [{ name: "alice", calls: 5, per: "day" }]);
    const b = buildGateway(CHAINS, [], { ...OPTS, quotaMapFile: "/keys/quotas.map" });
    expect(buildGateway(CHAINS, [], OPTS).config).toBe(a.config);
    expect(b.config).toContain("map(/keys/quotas.map)");
  });
});
