/** rpcstack:badges: defaults, every wrong value refused naming its key, and what the plan makes of it. */
import { describe, expect, it } from "vitest";
import { planStack } from "../plan/index.js";
import { TEST_PROJECT_KEYS } from "./harness.js";
import { loadRaw, problemsOf } from "./support/rawConfig.js";

const project = { projectId: "webapp", chains: ["SEP1", "STRKS"], origins: ["https://app.example.com"] };
const base = (badges: unknown = { projects: [project] }, gateway: unknown = {}) => ({
  network: "testnet",
  tier: "recommended",
  host: { kind: "local" },
  projectKeys: TEST_PROJECT_KEYS,
  gateway,
  badges,
});

describe("rpcstack:badges", () => {
  it("is off unless set: no badge service, no badge rules", () => {
    const { badges, ...rest } = base();
    const s = loadRaw(rest);
    expect(s.badges).toBeUndefined();
    const plan = planStack(s);
    expect(plan.gateway.services.badges).toBeUndefined();
    expect(plan.gatewayConfig.compiled.config).not.toMatch(/badge|jwt_verify/);
    void badges;
  });

  it("fills its defaults: 5-minute badges of 1000 calls, 20 badges per address per minute, the first key generation", () => {
    expect(loadRaw(base()).badges).toEqual({
      perAddressPerMinute: 20,
      signingKeyGeneration: 1,
      projects: [{ ...project, lifetimeSeconds: 300, allowance: 1000 }],
    });
    const own = loadRaw(base({ lifetimeSeconds: 120, projects: [{ ...project, allowance: 50 }, { ...project, projectId: "other", lifetimeSeconds: 60 }] })).badges!;
    expect(own.projects.map((p) => [p.lifetimeSeconds, p.allowance])).toEqual([[120, 50], [60, 1000]]);
  });

  it.each([
    ["half-configured: no projects", {}, "rpcstack:badges.projects", /is required/],
    ["an empty project list", { projects: [] }, "rpcstack:badges.projects", /at least 1 item/],
    ["a project without origins", { projects: [{ projectId: "a", chains: ["SEP1"] }] }, "rpcstack:badges.projects[0].origins", /is required/],
    ["a wildcard origin", { projects: [{ ...project, origins: ["*"] }] }, "rpcstack:badges.projects[0].origins[0]", /exact origin/],
    ["an origin with a path", { projects: [{ ...project, origins: ["https://app.example.com/page"] }] }, "rpcstack:badges.projects[0].origins[0]", /no path/],
    ["a plain-HTTP public page", { projects: [{ ...project, origins: ["http://app.example.com"] }] }, "rpcstack:badges.projects[0].origins[0]", /travel in clear/],
    ["a chain the stack does not serve", { projects: [{ ...project, chains: ["ETH1"] }] }, "rpcstack:badges.projects[0].chains[0]", /not a chain this gateway serves \(SEP1, STRKS\)/],
    ["a lowercase chain id", { projects: [{ ...project, chains: ["sep1"] }] }, "rpcstack:badges.projects[0].chains[0]", /chain id like/],
    ["two projects of one id", { projects: [project, project] }, "rpcstack:badges.projects[1].projectId", /already used by badges.projects\[0\]/],
    ["a lifetime over an hour", { lifetimeSeconds: 7200, projects: [project] }, "rpcstack:badges.lifetimeSeconds", /<= 3600/],
    ["a lifetime under 30 s", { projects: [{ ...project, lifetimeSeconds: 5 }] }, "rpcstack:badges.projects[0].lifetimeSeconds", />= 30/],
    ["an allowance of zero", { projects: [{ ...project, allowance: 0 }] }, "rpcstack:badges.projects[0].allowance", />= 1/],
    ["a rate of zero", { projects: [{ ...project, ratePerSecond: 0 }] }, "rpcstack:badges.projects[0].ratePerSecond", />= 1/],
    ["a rate that is no whole number", { projects: [{ ...project, ratePerSecond: 2.5 }] }, "rpcstack:badges.projects[0].ratePerSecond", /integer/],
    ["an unknown key", { projects: [project], secret: "x" }, "rpcstack:badges.secret", /not a known key/],
  ])("refuses %s, naming the key", (_label, badges, key, why) => {
    const problems = problemsOf(base(badges));
    expect(problems.find((p) => p.startsWith(key))).toMatch(why);
  });

  it("loopback pages may use plain HTTP (development)", () => {
    expect(loadRaw(base({ projects: [{ ...project, origins: ["http://localhost:5173", "http://127.0.0.1:8080"] }] })).badges!.projects[0].origins).toHaveLength(2);
  });
});

describe("badges in the plan", () => {
  it("a badge service beside the gateway, with the projects' chains as the claims the gateway checks", () => {
    const plan = planStack(loadRaw(base()));
    const svc = plan.gateway.services.badges!;
    expect(svc.containerName).toBe("rpcstack-badges");
    expect(svc.secretEnvironment).toEqual({ RPCSTACK_BADGE_SIGNING_KEY: "RPCSTACK_BADGE_SIGNING_KEY" });
    expect(JSON.parse(svc.environment.RPCSTACK_BADGE_PROJECTS)).toEqual([
      { projectId: "webapp", chains: { SEP1: "sep1", STRKS: "strks" }, origins: ["https://app.example.com"], lifetimeSeconds: 300, allowance: 1000 },
    ]);
    // Nothing of the service is published: the gateway serves it at /badge.
    expect(svc.ports.every((p) => !p.publish)).toBe(true);
    const cfg = plan.gatewayConfig.compiled.config;
    expect(cfg).toContain("server badges badges:8480");
    expect(cfg).toMatch(/jwt_verify\("ES256","\/usr\/local\/etc\/haproxy\/badge.pub.pem"\)/);
    expect(plan.gatewayConfig.compiled.files["badge_projects.map"]).toBe("webapp webapp\n");
    // No project has a rate of its own: every key and project has the gateway's, and no rule asks.
    expect(plan.gatewayConfig.compiled.files["badge_rates.map"]).toBeUndefined();
    expect(cfg).not.toContain("txn.rate_max");
  });

  it("a project's own rate: its badges together get it (in calls per 10 s window), the others keep the gateway's", () => {
    const plan = planStack(loadRaw(base({ projects: [{ ...project, ratePerSecond: 5 }, { ...project, projectId: "other" }] }, { rateLimitPerSecond: 50 })));
    expect(plan.gatewayConfig.options.badges!.ratePerSecond).toEqual({ webapp: 5 });
    expect(plan.gatewayConfig.compiled.files["badge_rates.map"]).toBe("webapp 50\n");
    const cfg = plan.gatewayConfig.compiled.config;
    expect(cfg).toMatch(/set-var\(txn.rate_max\) var\(txn.badge_project\),map_str_int\(\/usr\/local\/etc\/haproxy\/badge_rates.map\)/);
    // The key's rate stays the gateway's (500 calls per window) for every key without a rate of its own.
    expect(cfg).toContain("! { var(txn.rate_max) -m found } { sc_http_req_rate(0),add(txn.batch_extra_rate) gt 500 } or");
    expect(cfg).toContain("{ var(txn.rate_max) -m found } { sc_http_req_rate(0),add(txn.batch_extra_rate),sub(txn.rate_max) gt 0 }");
  });

  it("a CORS list of the gateway's own gains the badge pages' origins; '*' stays '*'", () => {
    const listed = planStack(loadRaw(base(undefined, { corsOrigins: ["https://other.example.com"] })));
    expect(listed.gatewayConfig.options.corsOrigins).toEqual(["https://other.example.com", "https://app.example.com"]);
    expect(planStack(loadRaw(base())).gatewayConfig.options.corsOrigins).toEqual(["*"]);
  });
});
