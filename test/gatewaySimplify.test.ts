/** Rules an ACL that never matches decides are settled when the config is written (gateway/simplify.ts). */
import { describe, expect, it } from "vitest";
import { anon, req } from "../gateway/model.js";
import { settleKnown, settleNever } from "../gateway/simplify.js";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayChain, type GatewayOptions } from "../gateway/build.js";

const OPTS: GatewayOptions = {
  bindAddress: "127.0.0.1", httpsPort: 8443, httpPort: 8080, metrics: { address: "127.0.0.1", port: 8405 },
  certFile: "/c/gw.pem", filesDir: "/g", luaDir: "/l", rateLimitPerSecond: 100, maxBodyBytes: 65536, checkIntervalMs: 1000,
  caFile: "/etc/ssl/certs/ca-certificates.crt", maxConnections: 1000, ...GATEWAY_LIMIT_DEFAULTS,
};
const ETH: GatewayChain = { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: "http://geth:8545", rpcWs: "ws://geth:8546" } };
const HUB: GatewayChain = { path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: "http://hub:26657" }, hostnames: { tendermintRpc: "rpc.hub.example" } };
const rulesOf = (cfg: string) => cfg.split("\n").filter((l) => /^    (http-request|http-after-response|tcp-request|use_backend) /.test(l));

describe("settleNever", () => {
  it("drops a rule that requires the ACL, keeps one that excludes it without that term", () => {
    const rules = [
      req(["track-sc1", "src"], ["public_host"]),
      req(["deny"], ["!public_host", "!known_chain", "or", "!", "public_host", "!known_iface"]),
      req(["deny"], ["gateway_path", "!public_host", ...anon("var(txn.ws)", "-m", "bool"), "or", "public_host", "{", "sc_conn_cur(0)", "gt", "1", "}"]),
      req(["set-var(txn.x)", "int(1)"], ["!public_host"]),
      req(["set-var(txn.y)", "int(1)"], anon("str(public_host)", "-m", "str", "public_host")),
    ];
    expect(settleNever(rules, ["public_host"])).toEqual([
      req(["deny"], ["!known_chain", "or", "!known_iface"]),
      req(["deny"], ["gateway_path", ...anon("var(txn.ws)", "-m", "bool")]),
      req(["set-var(txn.x)", "int(1)"], undefined),
      req(["set-var(txn.y)", "int(1)"], anon("str(public_host)", "-m", "str", "public_host")),
    ]);
  });

  it("changes nothing when no ACL is settled", () => {
    const rules = [req(["deny"], ["public_host"])];
    expect(settleNever(rules, [])).toEqual(rules);
  });
});

describe("settleKnown", () => {
  const ws = anon("var(txn.ws)", "-m", "bool");
  const eth = anon("var(txn.chain)", "-m", "str", "eth");
  const known = new Map([["{ var(txn.ws) -m bool }", false], ["{ var(txn.chain) -m str eth }", true], ["gateway_path", true]]);

  it("takes a term known true out of its branch, and a branch whose term is known false out of the rule", () => {
    const rules = [
      req(["set-var(txn.a)", "int(1)"], [...eth, "METH_POST"]),
      req(["set-var(txn.b)", "int(1)"], [...ws, "gateway_path"]),
      req(["set-var(txn.c)", "int(1)"], [...ws, "or", ...eth, "{", "nbsrv(be)", "eq", "0", "}"]),
      req(["set-var(txn.d)", "int(1)"], ["!", ...ws, "gateway_path"]),
      req(["set-var(txn.e)", "int(1)"], ["!", ...eth, "or", "!gateway_path"]),
      req(["set-var(txn.f)", "int(1)"], ["METH_GET"]),
    ];
    expect(settleKnown(rules, known)).toEqual([
      req(["set-var(txn.a)", "int(1)"], ["METH_POST"]),
      req(["set-var(txn.c)", "int(1)"], ["{", "nbsrv(be)", "eq", "0", "}"]),
      req(["set-var(txn.d)", "int(1)"], undefined),
      req(["set-var(txn.f)", "int(1)"], ["METH_GET"]),
    ]);
  });

  it("leaves a term that only resembles a known one (other patterns, other flags) as it is", () => {
    const rules = [req(["deny"], anon("var(txn.chain)", "-m", "str", "eth", "strk")), req(["deny"], anon("var(txn.ws)", "-m", "bool", "-i"))];
    expect(settleKnown(rules, known)).toEqual(rules);
  });
});

describe("the generated frontend", () => {
  it("without public hostnames writes no rule for them; with one, their rate and in-progress rules are there", () => {
    const without = rulesOf(buildGateway([ETH], [], OPTS).config);
    const withHost = rulesOf(buildGateway([ETH, HUB], [], OPTS).config);
    expect(without.filter((l) => l.includes("public_host"))).toEqual([]);
    expect(without.some((l) => l.includes("st_addresses"))).toBe(false);
    expect(withHost.filter((l) => /track-sc1 src,ipmask\(32,64\) table st_addresses if public_host$/.test(l))).toHaveLength(1);
    expect(withHost.some((l) => l.includes("too many requests in progress") && l.includes("or public_host"))).toBe(true);
    // The key check still applies to every gateway path.
    expect(without.some((l) => l.includes("invalid or missing project key") && l.endsWith("if ! { var(txn.keyname) -m found }"))).toBe(true);
  });
});
