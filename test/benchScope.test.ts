/**
 * The instruction counts' config edits (bench/scope.ts: the route part scoped to one route, and no
 * rule at all) and the reading of callgrind's dump (bench/callgrind.ts). HAProxy checks every
 * edited config: an edit the bench measures must be one HAProxy runs.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../devtools/gatewayFiles.js";
import { haproxyBinary } from "../devtools/haproxy.js";
import { callgrindTotal } from "../bench/callgrind.js";
import { selfSignedCert } from "../bench/gateway.js";
import { bareRelay, routeKnown, scopeToRoute, words } from "../bench/scope.js";

const dir = mkdtempSync(join(tmpdir(), "rpcstack-bench-scope-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
selfSignedCert(dir);
const opts: GatewayOptions = {
  bindAddress: "127.0.0.1", httpsPort: 8443, httpPort: 8080, metrics: { address: "127.0.0.1", port: 8405 }, certFile: join(dir, "both.pem"), filesDir: join(dir, "files"),
  luaDir: PACKAGE_LUA_DIR, rateLimitPerSecond: 100, maxBodyBytes: 65536, checkIntervalMs: 1000, caFile: "/etc/ssl/certs/ca-certificates.crt", maxConnections: 1000, ...GATEWAY_LIMIT_DEFAULTS,
};
const build = buildGateway(
  [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://127.0.0.1:8545", rpcWs: "ws://127.0.0.1:8546" } },
    { path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: "http://127.0.0.1:9545" } },
  ],
  [{ name: "k", key: "k".repeat(40) }],
  opts,
);
writeGatewayFiles(opts.filesDir, build);
const frontendRules = (cfg: string) => cfg.slice(cfg.indexOf("frontend https")).split("\n\n")[0].split("\n").filter((l) => /^ {4}(http-request|http-after-response|use_backend|default_backend) /.test(l));
/** `haproxy -c` on the text: throws with HAProxy's words when it refuses it. */
const check = (name: string, cfg: string) => {
  const file = join(dir, `${name}.cfg`);
  writeFileSync(file, cfg);
  execFileSync(haproxyBinary(), ["-c", "-q", "-f", file], { stdio: "pipe" });
};
const known = routeKnown({ chain: "eth", iface: "rpc-http", method: "METH_POST", noQuota: true }, ["eth", "strk"]);

describe("the route part scoped to one route", () => {
  const { config, removed } = scopeToRoute(build.config, known);
  const before = frontendRules(build.config);
  const after = frontendRules(config);
  const split = before.findIndex((l) => l.includes("track-sc0 var(txn.keyname)"));

  it("keeps every rule up to the key's rate tracking as it was, the 401 among them", () => {
    expect(after.slice(0, split + 1)).toEqual(before.slice(0, split + 1));
    expect(after.some((l) => l.includes("invalid or missing project key"))).toBe(true);
  });

  it("takes out the other chain's, the WebSocket's and the quota's rules, and says how many", () => {
    const route = after.slice(split + 1).filter((l) => l.startsWith("    http-request "));
    expect(removed).toBe(before.length - after.length);
    expect(removed).toBeGreaterThan(20);
    expect(route.filter((l) => /strk|STRK/.test(l))).toEqual([]);
    expect(route.filter((l) => /(?<!! )\{ var\(txn\.ws\) -m bool \}/.test(l))).toEqual([]);
    expect(route.filter((l) => l.includes("txn.quota_over") || l.includes("st_quota"))).toEqual([]);
    // What tells a key with a quota from one without stays: it is the quota route's way in.
    expect(route.some((l) => l.startsWith("    http-request set-var(txn.quota) "))).toBe(true);
    // The after-response rules stay whole (they run for every answer, whatever its route).
    expect(after.filter((l) => l.startsWith("    http-after-response "))).toEqual(before.filter((l) => l.startsWith("    http-after-response ")));
  });

  it("settles the terms every call of the route satisfies, and HAProxy takes the result", () => {
    const rate = after.find((l) => l.includes("rate limit exceeded for this project key"))!;
    expect(rate).not.toMatch(/gateway_path|var\(txn\.keyname\) -m found/);
    expect(rate).toMatch(/sc_http_req_rate\(0\)/);
    check("scoped", config);
  });
});

describe("no frontend rule at all", () => {
  it("sends every request to the route's backend, and HAProxy takes it", () => {
    const bare = bareRelay(build.config, "be_eth_rpc");
    expect(frontendRules(bare)).toEqual(["    default_backend be_eth_rpc"]);
    check("bare", bare);
  });

  it("refuses a backend the frontend does not route to", () => {
    expect(() => bareRelay(build.config, "be_nowhere")).toThrow(/does not route to be_nowhere/);
  });
});

describe("words as HAProxy splits them", () => {
  it("keeps a quoted word whole, blanks and all", () => {
    expect(words(`set-var(txn.a) 'var(txn.q),field(1, )' if { req.body -m reg '(?i)^\\s*\\{' } "a b"`)).toEqual(["set-var(txn.a)", "'var(txn.q),field(1, )'", "if", "{", "req.body", "-m", "reg", "'(?i)^\\s*\\{'", "}", '"a b"']);
  });
});

describe("callgrind's dump", () => {
  it("counts what its summary line says", () => {
    expect(callgrindTotal("version: 1\ncmd: haproxy\nevents: Ir\nsummary: 377303031\n\nfl=(1)\n")).toBe(377303031);
    expect(callgrindTotal("events: Ir\ntotals: 42\n")).toBe(42);
  });

  it("refuses a dump without one", () => {
    expect(() => callgrindTotal("events: Ir\nfl=(1)\n")).toThrow(/no summary line/);
  });
});
