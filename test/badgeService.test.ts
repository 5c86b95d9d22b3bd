/** The badge service on its own: who gets a badge, what it says, the signing key it takes, its command line. */
import { spawnSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { join } from "node:path";
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { decide, parseProjects, type ServiceProject } from "../badges/issue.js";
import { createBadgeServer } from "../badges/server.js";
import { readSigningKey, signBadge } from "../badges/token.js";
import { loadConfig } from "../config/index.js";
import { readStackFile } from "../export/stackFile.js";
import { planStack } from "../plan/index.js";
import { badgeServiceProjects } from "../plan/badges.js";
import { ROOT, encodeConfigValue } from "./harness.js";
import { newSigningKey } from "./support/badges.js";
import { listenLoopback } from "./support/http.js";

const P: ServiceProject = { projectId: "web", chains: { ETH1: "eth", STRK: "strk" }, origins: ["https://app.example.org"], lifetimeSeconds: 120, allowance: 7 };
const projects = new Map([[P.projectId, P]]);

describe("decide", () => {
  it("a badge for the asked chains only, bound to the project, with the project's lifetime and allowance", () => {
    const d = decide("https://app.example.org", { projectId: "web", chainIds: ["STRK"] }, projects, 1000, "id1");
    expect(d).toEqual({ status: 200, claims: { iss: "rpcstack-badges", sub: "web", chains: { strk: 1 }, alw: 7, jti: "id1", iat: 1000, exp: 1120 } });
  });

  it.each([
    ["a body that is no object", "https://app.example.org", "[]", 400, /must be a JSON object/],
    ["no projectId", "https://app.example.org", { chainIds: ["ETH1"] }, 400, /projectId must be/],
    ["an empty chain list", "https://app.example.org", { projectId: "web", chainIds: [] }, 400, /chainIds must list/],
    ["no Origin", undefined, { projectId: "web", chainIds: ["ETH1"] }, 403, /no Origin header/],
    ["another origin", "https://app.example.org.evil.net", { projectId: "web", chainIds: ["ETH1"] }, 403, /may not ask for badges of project web/],
    ["an unknown project", "https://app.example.org", { projectId: "other", chainIds: ["ETH1"] }, 404, /unknown project "other"/],
    ["a chain outside the project", "https://app.example.org", { projectId: "web", chainIds: ["ETH1", "COSMOSHUB"] }, 403, /chain COSMOSHUB is outside project web's scope \(ETH1, STRK\)/],
    // Names every object inherits are no chain of the project's.
    ["an inherited property taken for a chain", "https://app.example.org", { projectId: "web", chainIds: ["constructor"] }, 403, /chain constructor is outside project web's scope/],
    ["the prototype taken for a chain", "https://app.example.org", { projectId: "web", chainIds: ["STRK", "__proto__"] }, 403, /chain __proto__ is outside project web's scope/],
    ["toString taken for a chain", "https://app.example.org", { projectId: "web", chainIds: ["toString"] }, 403, /chain toString is outside/],
  ])("refuses %s", (_label, origin, body, status, why) => {
    const d = decide(origin, body, projects, 1000, "x");
    expect(d.status).toBe(status);
    expect("error" in d && d.error).toMatch(why);
  });

  it("reads its projects from RPCSTACK_BADGE_PROJECTS, naming what is wrong", () => {
    expect(parseProjects(JSON.stringify([P]))).toEqual([P]);
    expect(() => parseProjects(undefined)).toThrow(/RPCSTACK_BADGE_PROJECTS is not set/);
    expect(() => parseProjects("{")).toThrow(/is not JSON/);
    expect(() => parseProjects(JSON.stringify([{ ...P, allowance: 0 }]))).toThrow(/RPCSTACK_BADGE_PROJECTS\[0\] must be/);
  });
});

describe("the signing key", () => {
  it("takes PKCS#8 PEM or its DER in base64; refuses anything else without repeating it", () => {
    const ec = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const pem = ec.export({ type: "pkcs8", format: "pem" }).toString();
    const der = ec.export({ type: "pkcs8", format: "der" }).toString("base64");
    expect(readSigningKey(pem).publicKeyPem).toBe(readSigningKey(der).publicKeyPem);
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    expect(() => readSigningKey(rsa)).toThrow(/must be an EC P-256 key/);
    const secretish = "not-a-key-but-secret-Xy7";
    expect(() => readSigningKey(secretish)).toThrow(/is not a PKCS#8 private key/);
    try {
      readSigningKey(secretish);
    } catch (e) {
      expect((e as Error).message).not.toContain(secretish);
    }
  });
});

describe("the service over HTTP", () => {
  it("signs ES256 badges any JWT library verifies with the public key, and logs no badge", async () => {
    const key = newSigningKey();
    const log: string[] = [];
    const server = createBadgeServer({ projects: [P], key, log: (l) => log.push(l) });
    const url = await listenLoopback(server);
    try {
      const res = await fetch(`${url}/badge`, { method: "POST", headers: { Origin: "https://app.example.org", "Content-Type": "application/json" }, body: JSON.stringify({ projectId: "web", chainIds: ["ETH1"] }) });
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const { key: badge, expiresIn } = (await res.json()) as { key: string; expiresIn: number };
      expect(expiresIn).toBe(120);
      expect(decodeProtectedHeader(badge)).toEqual({ alg: "ES256", typ: "JWT" });
      const { payload } = await jwtVerify(badge, await importSPKI(key.publicKeyPem, "ES256"));
      expect(payload).toMatchObject({ sub: "web", chains: { eth: 1 }, alw: 7 });
      expect(decodeJwt(badge).jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(log.join("\n")).toMatch(/badge issued project=web origin=https:\/\/app.example.org chains=eth/);
      expect(log.join("\n")).not.toContain(badge);
      const big = await fetch(`${url}/badge`, { method: "POST", headers: { Origin: "https://app.example.org" }, body: "x".repeat(5000) });
      expect(big.status).toBe(413);
    } finally {
      server.close();
    }
  });

  it("the command refuses to start without its projects or key, saying which", () => {
    const r = spawnSync(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "badges/serverMain.ts"), "--port", "1"], { encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^rpcstack-badges: RPCSTACK_BADGE_PROJECTS is not set/);
    const noPort = spawnSync(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "badges/serverMain.ts")], { encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(noPort.status).toBe(2);
    expect(noPort.stderr).toMatch(/--port must be a port number/);
  });
});

describe("the badge token between the service and the gateway", () => {
  it("the gateway's configuration verifies the service's algorithm and reads only claims the service signs", async () => {
    const { entries } = readStackFile(ROOT, "testnet");
    const badges = { projects: [{ projectId: "webapp", chains: ["SEP1"], origins: ["https://app.example.com"] }] };
    const settings = loadConfig({ entries: { ...entries, "rpcstack:badges": encodeConfigValue(badges) }, withoutSecrets: true });
    const plan = planStack(settings);
    const cfg = plan.gatewayConfig.compiled.config;
    // The service as the stack configures it, asked by the project's page.
    const projects = new Map(parseProjects(badgeServiceProjects(settings, plan.surface)).map((p) => [p.projectId, p]));
    const d = decide("https://app.example.com", { projectId: "webapp", chainIds: ["SEP1"] }, projects, 1000, "id1");
    if (d.status !== 200) throw new Error(d.error);
    const key = newSigningKey();
    const badge = await signBadge(d.claims, key);
    const algs = [...cfg.matchAll(/jwt_verify\("([^"]+)"/g)].map((m) => m[1]);
    expect(algs).toEqual([decodeProtectedHeader(badge).alg]);
    // haproxy.cfg escapes the JSONPath's "$".
    const paths = [...cfg.matchAll(/jwt_payload_query\('\\?\$\.([^']+)'/g)].map((m) => m[1]);
    expect([...new Set(paths.map((p) => p.split(".")[0]))].sort()).toEqual(["alw", "chains", "exp", "jti", "sub"]);
    const claims = decodeJwt(badge) as Record<string, any>;
    // The path's chain as the badge names it, and every other claim the gateway reads.
    expect(paths).toContain("chains.sep1");
    for (const path of paths.filter((p) => !p.startsWith("chains.") || p === "chains.sep1")) {
      expect({ path, value: path.split(".").reduce((o, k) => o?.[k], claims) }).toEqual({ path, value: expect.anything() });
    }
  });
});
