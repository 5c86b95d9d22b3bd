/** rpcstack:gateway.quotas: names checked against keys and badge projects, wrong values refused naming the entry, and the key sync's map. */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../config/index.js";
import { exportCompose } from "../export/compose.js";
import { readStackFile } from "../export/stackFile.js";
import { QUOTA_MAP_FILE } from "../gateway/quotas.js";
import { keyFiles, planStack } from "../plan/index.js";
import { ROOT, TEST_PROJECT_KEYS } from "./harness.js";
import { loadRaw, problemsOf } from "./support/rawConfig.js";

const project = { projectId: "webapp", chains: ["SEP1"], origins: ["https://app.example.com"] };
const base = (quotas: unknown) => ({
  network: "testnet",
  tier: "recommended",
  host: { kind: "local" },
  projectKeys: TEST_PROJECT_KEYS,
  gateway: { quotas },
  badges: { projects: [project] },
});

describe("rpcstack:gateway.quotas", () => {
  it("takes quotas for project keys and badge projects, and the key sync ships them as quotas.map, not haproxy.cfg", () => {
    const quotas = [{ name: "ci-first", calls: 1000, per: "day" }, { name: "badge:webapp", calls: 50000, per: "month" }];
    const s = loadRaw(base(quotas));
    expect(s.gateway.quotas).toEqual(quotas);
    expect(keyFiles("keys", s.gateway.quotas).find((f) => f.name === QUOTA_MAP_FILE)).toEqual({ name: QUOTA_MAP_FILE, content: "# <name> <calls> <day|month>\nci-first 1000 day\nbadge:webapp 50000 month\n" });
    // haproxy.cfg reads the map whatever it holds: a quota set or removed changes no byte of it.
    expect(planStack(s).gatewayConfig.compiled.config).toBe(planStack(loadRaw(base([]))).gatewayConfig.compiled.config);
    expect(loadRaw({ ...base(undefined), gateway: {} }).gateway.quotas).toEqual([]);
  });

  it.each([
    ["an unknown name", [{ name: "nobody", calls: 5, per: "day" }], /rpcstack:gateway\.quotas\[0\]\.name: "nobody" is neither a project key's name \(rpcstack:projectKeys\) nor "badge:" and a badge project's id/],
    ["a badge project by its bare id", [{ name: "webapp", calls: 5, per: "day" }], /rpcstack:gateway\.quotas\[0\]\.name: "webapp" is a badge project's id, not a project key's name: its badges have a quota of their own, named "badge:webapp"/],
    ["badge: and no badge project", [{ name: "badge:nobody", calls: 5, per: "day" }], /rpcstack:gateway\.quotas\[0\]\.name: "badge:nobody" names no badge project: "nobody" is not in rpcstack:badges\.projects/],
    ["badge: and a project id with a slash", [{ name: "badge:a/b", calls: 5, per: "day" }], /rpcstack:gateway\.quotas\[0\]\.name: must be a project key's name, or badge: and a badge project's id/],
    ["a name twice", [{ name: "ci-first", calls: 5, per: "day" }, { name: "ci-first", calls: 9, per: "month" }], /rpcstack:gateway\.quotas\[1\]\.name: "ci-first" already has a quota in gateway\.quotas\[0\]/],
    ["zero calls", [{ name: "ci-first", calls: 0, per: "day" }], /rpcstack:gateway\.quotas\[0\]\.calls: must be >= 1/],
    ["a fraction of calls", [{ name: "ci-first", calls: 2.5, per: "day" }], /rpcstack:gateway\.quotas\[0\]\.calls: must be a positive whole number of calls/],
    ["a week", [{ name: "ci-first", calls: 5, per: "week" }], /rpcstack:gateway\.quotas\[0\]\.per/],
    ["no period", [{ name: "ci-first", calls: 5 }], /rpcstack:gateway\.quotas\[0\]\.per: is required|rpcstack:gateway\.quotas\[0\]: .*per/],
  ])("refuses %s, naming the entry", (_label, quotas, message) => {
    expect(problemsOf(base(quotas)).join("\n")).toMatch(message);
  });

  it("ships the quota map with the key sync, beside the key map, as HAProxy's container reads it on the keys volume", () => {
    const { entries } = readStackFile(ROOT, "testnet");
    const gateway = { ...JSON.parse(entries["rpcstack:gateway"] ?? "{}"), quotas: [{ name: "ci-first", calls: 1000, per: "day" }] };
    const out = exportCompose(loadConfig({ entries: { ...entries, "rpcstack:gateway": JSON.stringify(gateway) }, withoutSecrets: true }), { projectKeys: TEST_PROJECT_KEYS });
    expect(out.mounted.find((f) => f.path === "keys/quotas.map")).toMatchObject({ from: { text: "# <name> <calls> <day|month>\nci-first 1000 day\n" }, mode: 0o644 });
    const sync = parse(out.files["dc-gateway.yaml"]).services["key-sync"];
    expect(sync.volumes).toContain("./keys/quotas.map:/run/rpcstack-keys/quotas.map:ro");
    expect(sync.environment).toMatchObject({ QUOTA_MAP: "/var/lib/rpcstack-keys/quotas.map", DESIRED_QUOTAS: "/run/rpcstack-keys/quotas.map" });
  });
});
