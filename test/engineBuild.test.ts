/**
 * scripts/engine/build.sh checks the provider plugins it is given: each binary is started and asked
 * its version as the engine asks it (GetPluginInfo over gRPC); a release other than the pin is
 * refused, naming both and the override, unless RPCSTACK_ACCEPT_PLUGIN names it, which engine.json
 * records. Runs on a cache of its own holding the built CLI and language host (so nothing is built
 * and the module proxy is never asked) and stand-in plugins (test/support/fakeProvider.cjs).
 */
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";
import { findEngine, type EngineManifest } from "./support/engine.js";

const found = findEngine();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "rpcstack-engine-build-"));
  dirs.push(d);
  return d;
};

/**
 * A plugin dir whose docker plugin reports `docker` and command plugin `command`; its kubernetes
 * plugin reports the pin (else the build would make the real one from the module cache: minutes).
 */
function pluginDir(versions: { docker: string; command: string }): string {
  const dir = temp();
  for (const [name, v] of Object.entries({ ...versions, kubernetes: "4.25.0" })) {
    const bin = join(dir, `pulumi-resource-${name}`);
    writeFileSync(bin, `#!/bin/sh\nexec node ${JSON.stringify(join(ROOT, "test/support/fakeProvider.cjs"))} ${v}\n`);
    chmodSync(bin, 0o755);
  }
  return dir;
}

function build(plugins: string, extra: Record<string, string> = {}) {
  if ("missing" in found) throw new Error(found.missing);
  const cache = temp();
  const engine = join(cache, "pulumi", found.manifest.cli);
  mkdirSync(join(engine, "bin"), { recursive: true });
  for (const f of ["pulumi", "pulumi-language-nodejs"]) symlinkSync(join(found.bin, f), join(engine, "bin", f));
  copyFileSync(join(found.dir, "language-host.txt"), join(engine, "language-host.txt"));
  const home = temp();
  const r = spawnSync("bash", [join(ROOT, "scripts/engine/build.sh")], {
    encoding: "utf8",
    env: { ...process.env, RPCSTACK_CACHE: cache, PULUMI_HOME: home, RPCSTACK_PLUGIN_DIR: plugins, RPCSTACK_ACCEPT_PLUGIN: "", GOPROXY: "off", ...extra },
    timeout: 120_000,
  });
  const manifest = JSON.parse(readFileSync(join(engine, "engine.json"), "utf8")) as EngineManifest;
  const cached = existsSync(join(home, "plugins")) ? readdirSync(join(home, "plugins")).filter((f) => !f.endsWith(".lock")) : [];
  return { status: r.status, out: `${r.stdout}\n${r.stderr}`, manifest, cached };
}

if ("missing" in found) {
  describe("the engine build's plugin check", () => {
    it(`NOT RUN: ${found.missing}`, () => {
      console.warn(`\n*** engine build test NOT RUN: ${found.missing} ***\n`);
      expect(process.env.CI, `CI builds the engine first, but ${found.missing}`).toBeFalsy();
    });
  });
} else {
  describe("the engine build's plugin check (GetPluginInfo, as the engine asks)", () => {
    it("a plugin that is not the pinned release is refused, saying what it reports and how to accept it; the pinned one is installed by exact version", () => {
      const r = build(pluginDir({ docker: "5.1.0", command: "1.2.1" }));
      expect(r.status, r.out).toBe(0);
      expect(r.out).toContain("plugin docker v5.2.0: not used: taken from RPCSTACK_PLUGIN_DIR: ");
      expect(r.out).toMatch(/pulumi-resource-docker reports v5\.1\.0, not the pinned v5\.2\.0 \(GetPluginInfo\); give it the v5\.2\.0 build, or accept this one with RPCSTACK_ACCEPT_PLUGIN=docker@5\.1\.0/);
      expect(r.manifest.plugins.docker).toMatchObject({ version: "5.2.0", built: false });
      expect(r.manifest.plugins.command).toMatchObject({ version: "1.2.1", built: true, reported: "1.2.1" });
      expect(r.manifest.plugins.command.accepted).toBeUndefined();
      // In Pulumi's plugin cache under the pinned version, where the engine looks by exact version; off the PATH.
      expect(r.cached.sort()).toEqual(["resource-command-v1.2.1", "resource-kubernetes-v4.25.0"]);
      expect(readdirSync(join(r.manifest.plugins.command.path!, ".."))).toContain("pulumi-resource-command");
      // The module proxy is not asked for a plugin whose provider has no known module version.
      expect(r.out).toContain("plugin aws v7.48.0: not built: no module version of its provider is known for v7.48.0, so the module proxy was not asked");
    });

    it("RPCSTACK_ACCEPT_PLUGIN lets that release stand in for the pin, and engine.json records what it is and why", () => {
      const r = build(pluginDir({ docker: "5.1.0", command: "1.2.1" }), { RPCSTACK_ACCEPT_PLUGIN: "docker@5.1.0" });
      expect(r.status, r.out).toBe(0);
      expect(r.out).toContain("plugin docker v5.2.0: taken from RPCSTACK_PLUGIN_DIR; v5.1.0 accepted in place of v5.2.0 by RPCSTACK_ACCEPT_PLUGIN (reports v5.1.0)");
      expect(r.manifest.plugins.docker).toMatchObject({ version: "5.2.0", built: true, reported: "5.1.0", accepted: "RPCSTACK_ACCEPT_PLUGIN=docker@5.1.0" });
      expect(r.cached.sort()).toEqual(["resource-command-v1.2.1", "resource-docker-v5.2.0", "resource-kubernetes-v4.25.0"]);
    });

    it("a binary that does not answer GetPluginInfo is refused, with what it said", () => {
      const dir = pluginDir({ docker: "5.2.0", command: "1.2.1" });
      writeFileSync(join(dir, "pulumi-resource-command"), "#!/bin/sh\necho 'not a provider' >&2\nexit 3\n");
      const r = build(dir);
      expect(r.out).toMatch(/plugin command v1\.2\.1: not used: taken from RPCSTACK_PLUGIN_DIR: the plugin did not answer GetPluginInfo \(.*exited \(3\) before it served gRPC: not a provider\)/);
      expect(r.manifest.plugins.command.built).toBe(false);
      expect(r.manifest.plugins.docker).toMatchObject({ built: true, reported: "5.2.0" });
    });
  });
}
