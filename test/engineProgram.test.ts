/**
 * The program under the real Pulumi engine (the CLI and Node.js language host scripts/engine/build.sh
 * builds), on a copy of the project with a file backend: it loads as Pulumi loads it, and a bad
 * config stops `pulumi preview` with the program's own message before any resource is registered.
 * The mock engine imports the program through vitest, which maps `./x.js` imports onto `.ts`;
 * Pulumi's own TypeScript loader does not, and the program failed to load at all
 * (MODULE_NOT_FOUND './components/rpcProvider.js') until the entry point became main.cjs.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify, parse } from "yaml";
import { ROOT } from "./harness.js";
import { engineEnv, expectNoStackTrace, findEngine, projectCopy, type Engine } from "./support/engine.js";

const found = findEngine();
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

const KEYS = JSON.stringify([{ name: "engine-test", key: "Zq3vX9kLmP2wR7tY5uB8nC1dF4gH6jK0aS" }]);

if ("missing" in found) {
  describe("the program under the real Pulumi engine", () => {
    it(`NOT RUN: ${found.missing}`, () => {
      console.warn(`\n*** real-engine program test NOT RUN: ${found.missing} ***\n`);
      expect(process.env.CI, `CI builds the engine first, but ${found.missing}`).toBeFalsy();
    });
  });
} else {
  const engine: Engine = found;
  describe("the program under the real Pulumi engine (built CLI and language host, file backend)", () => {
    let project: string;
    let env: NodeJS.ProcessEnv;
    const pulumi = (...args: string[]) => {
      const r = spawnSync(join(engine.bin, "pulumi"), [...args, "--non-interactive"], { cwd: project, env, encoding: "utf8", timeout: 300_000 });
      return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
    };

    beforeAll(() => {
      const stack = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
      stack.config["rpcstack:gateway"] = { rateLimitPerSecond: "fast" };
      project = projectCopy(temp("rpcstack-engine-project-"), { local: stringify(stack) });
      const state = temp("rpcstack-engine-state-");
      env = engineEnv(engine, temp("rpcstack-engine-home-"), { PULUMI_BACKEND_URL: `file://${state}`, PULUMI_CONFIG_PASSPHRASE: "" });
      const init = pulumi("stack", "init", "local");
      expect(init.status, init.out).toBe(0);
      const keys = pulumi("config", "set", "--secret", "--stack", "local", "rpcstack:projectKeys", KEYS);
      expect(keys.status, keys.out).toBe(0);
    }, 120_000);

    it("a bad config value stops `pulumi preview` with the program's message naming the key, and nothing is registered", () => {
      const r = pulumi("preview", "--stack", "local");
      expect(r.status, r.out).not.toBe(0);
      expect(r.out).toContain("rpcstack:gateway.rateLimitPerSecond: must be an integer");
      expect(r.out).not.toMatch(/MODULE_NOT_FOUND|Cannot find module/);
      // The message alone: no "unhandled exception" wrapper, no stack trace.
      expectNoStackTrace(r.out);
      // No provider and no container was asked for: the program stopped before registering anything.
      expect(r.out).not.toMatch(/docker:index|command:local|pulumi-resource-/);
    }, 300_000);

    it("the project's stack file keeps the key encrypted (pulumi config set --secret), never in clear", () => {
      const file = readFileSync(join(project, "stacks/Pulumi.local.yaml"), "utf8");
      expect(file).toMatch(/rpcstack:projectKeys:\s+secure: v1:/);
      expect(file).not.toContain("Zq3vX9kLmP2wR7tY5uB8nC1dF4gH6jK0aS");
    });
  });
}
