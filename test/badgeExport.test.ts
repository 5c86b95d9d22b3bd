/** The compose export with rpcstack:badges: the badge service in dc-gateway.yaml, its key from the operator's environment, the gateway's public key file. */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig } from "../config/index.js";
import { BADGE_KEY_COMMAND, exportCompose } from "../export/compose.js";
import { readStackFile } from "../export/stackFile.js";
import { ROOT, TEST_PROJECT_KEYS, encodeConfigValue } from "./harness.js";
import { newSigningKey } from "./support/badges.js";
import { checkContainerFiles } from "./support/haproxy.js";

const BADGES = { projects: [{ projectId: "webapp", chains: ["SEP1"], origins: ["https://app.example.com"] }] };
const settings = () => {
  const { entries } = readStackFile(ROOT, "testnet");
  return loadConfig({ entries: { ...entries, "rpcstack:badges": encodeConfigValue(BADGES) }, withoutSecrets: true });
};

describe("compose export with badges", () => {
  it("dc-gateway.yaml runs the badge service, which reads its key from the environment; HAProxy gets the public key and accepts its files", () => {
    const key = newSigningKey();
    const out = exportCompose(settings(), { projectKeys: TEST_PROJECT_KEYS, badgePublicKey: key.publicKeyPem });
    const gw = parse(out.files["dc-gateway.yaml"]);
    const svc = gw.services.badges;
    expect(svc.environment.RPCSTACK_BADGE_SIGNING_KEY).toBe("${RPCSTACK_BADGE_SIGNING_KEY:?set RPCSTACK_BADGE_SIGNING_KEY}");
    expect(JSON.parse(svc.environment.RPCSTACK_BADGE_PROJECTS)[0]).toMatchObject({ projectId: "webapp", chains: { SEP1: "sep1" } });
    expect(svc.volumes).toContain("./badges/server.js:/badges/server.js:ro");
    expect(svc.ports).toBeUndefined();
    const mounted = Object.fromEntries(out.mounted.filter((f) => "text" in f.from).map((f) => [f.path, (f.from as { text: string }).text]));
    expect(mounted["gateway/badge.pub.pem"]).toBe(key.publicKeyPem);
    const files: Record<string, string> = {};
    for (const v of gw.services.haproxy.volumes as string[]) {
      const [source, target] = v.split(":");
      if (source.startsWith("./")) files[target] = mounted[source.slice(2)] ?? readFileSync(join(ROOT, "gateway/lua", source.replace(/^\.\/gateway\/lua\//, "")), "utf8");
    }
    expect(checkContainerFiles(files)).toContain("Configuration file is valid");
  });

  it("without a signing key the gateway file is not written, and the reason says how to make one", () => {
    const out = exportCompose(settings(), { projectKeys: TEST_PROJECT_KEYS });
    expect(out.files["dc-gateway.yaml"]).toBeUndefined();
    expect(out.skipped["dc-gateway.yaml"]).toContain(BADGE_KEY_COMMAND);
  });

  const dir = mkdtempSync(join(tmpdir(), "rpcstack-badge-export-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("npm run export takes the key from --badge-key-file and refuses one that is no EC key, without echoing it", () => {
    const stack = join(dir, "Pulumi.badges.yaml");
    const text = readFileSync(join(ROOT, "stacks/Pulumi.testnet.yaml"), "utf8");
    writeFileSync(stack, `${text.trimEnd()}\n  rpcstack:badges:\n    projects:\n      - projectId: webapp\n        chains: [SEP1]\n        origins: ["https://app.example.com"]\n`);
    const keys = JSON.stringify(TEST_PROJECT_KEYS);
    const good = join(dir, "badge.key");
    writeFileSync(good, newSigningKey().privateKey.export({ type: "pkcs8", format: "pem" }).toString());
    const cli = (args: string[]) => spawnSync("npx", ["tsx", "export/cli.ts", "--stack-file", stack, ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, RPCSTACK_PROJECT_KEYS: keys, RPCSTACK_BADGE_SIGNING_KEY: "" } });
    const ok = cli(["--out", join(dir, "ok"), "--badge-key-file", good]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(readFileSync(join(dir, "ok/gateway/badge.pub.pem"), "utf8")).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(readFileSync(join(dir, "ok/dc-gateway.yaml"), "utf8")).not.toContain("PRIVATE KEY");
    const bad = join(dir, "bad.key");
    writeFileSync(bad, "secret-looking-but-no-key-Q9");
    const r = cli(["--out", join(dir, "bad"), "--badge-key-file", bad]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/the badge signing key is not a PKCS#8 private key/);
    expect(r.stderr).not.toContain("secret-looking");
  });
});
