/**
 * The provider plugins the program asks the engine for are the ones the engine build makes
 * (scripts/engine/plugins.json). @pulumi/command 4.5.0, a release published by mistake, asked for
 * plugin `command v4.5.0`, which no real provider release is: no mock engine could see that. The
 * first test reads the packages as the Node.js language host does; the second asks the real engine.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";
import { engineEnv, findEngine } from "./support/engine.js";

type Plugins = Record<string, { version: string; moduleVersion: string }>;
const planned = (): Plugins => {
  const json = JSON.parse(readFileSync(join(ROOT, "scripts/engine/plugins.json"), "utf8"));
  delete json.$comment;
  return json;
};

/** name -> version of every resource plugin under node_modules/@pulumi, as the language host derives it. */
function requestedByPackages(): Record<string, string> {
  const out: Record<string, string> = {};
  const dir = join(ROOT, "node_modules/@pulumi");
  for (const pkg of readdirSync(dir)) {
    const pj = JSON.parse(readFileSync(join(dir, pkg, "package.json"), "utf8"));
    if (!pj.pulumi?.resource) continue;
    out[pj.pulumi.name ?? pkg] = String(pj.pulumi.version ?? pj.version).replace(/^v/, "");
  }
  return out;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe("provider plugins", () => {
  it("every @pulumi provider package asks for the plugin release the engine build makes, and nothing else", () => {
    const want = Object.fromEntries(Object.entries(planned()).map(([n, p]) => [n, p.version]));
    expect(requestedByPackages()).toEqual(want);
  });

  it("README names the CLI release and every plugin release the engine build makes", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\s+/g, " ");
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    expect(readme).toContain(`CLI v${lock.packages["node_modules/@pulumi/pulumi"].version}`);
    for (const [name, p] of Object.entries(planned())) expect(readme).toContain(`${name} v${p.version}`);
  });

  it("the real engine, asked which plugins this program needs, names exactly those releases", () => {
    const engine = findEngine();
    if ("missing" in engine) {
      // Without the engine this check has not run: that may pass on a laptop, never in CI.
      console.warn(`*** engine plugin check NOT RUN: ${engine.missing} ***`);
      expect(process.env.CI, `CI builds the engine first, but ${engine.missing}`).toBeFalsy();
      return;
    }
    const home = mkdtempSync(join(tmpdir(), "rpcstack-engine-home-"));
    dirs.push(home);
    const state = mkdtempSync(join(tmpdir(), "rpcstack-engine-state-"));
    dirs.push(state);
    const about = execFileSync(join(engine.bin, "pulumi"), ["about", "--json"], {
      cwd: ROOT,
      encoding: "utf8",
      env: engineEnv(engine, home, { PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: "" }),
      timeout: 120_000,
    });
    const plugins = (JSON.parse(about.slice(about.indexOf("{"))).plugins as { name: string; version: string; kind: string }[])
      .filter((p) => p.kind === "resource")
      .map((p) => [p.name, p.version]);
    const want = Object.entries(planned()).map(([n, p]) => [n, p.version]);
    expect(Object.fromEntries(plugins)).toEqual(Object.fromEntries(want));
  });
});
