/**
 * The real Pulumi engine that scripts/engine/build.sh builds (CLI, Node.js language host, and the
 * provider plugins it could build), for tests that run it. `.ci/run` builds it before the tests.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../harness.js";

export interface EngineManifest {
  readonly cli: string;
  readonly languageHost: string;
  readonly plugins: Record<string, { readonly version: string; readonly built: boolean; readonly note: string }>;
}

export interface Engine {
  readonly dir: string;
  readonly bin: string;
  readonly manifest: EngineManifest;
}

/** The engine build.sh made for this checkout's package-lock.json, or why there is none. */
export function findEngine(): Engine | { readonly missing: string } {
  const dir = execFileSync("bash", [join(ROOT, "scripts/engine/build.sh"), "--print-dir"], { encoding: "utf8" }).trim();
  const manifest = join(dir, "engine.json");
  if (!existsSync(join(dir, "bin/pulumi")) || !existsSync(manifest)) return { missing: `no engine in ${dir}: run bash scripts/engine/build.sh` };
  return { dir, bin: join(dir, "bin"), manifest: JSON.parse(readFileSync(manifest, "utf8")) as EngineManifest };
}

/**
 * A copy of the project a test can deploy without touching the checkout: the files git tracks
 * are copied (the engine writes the stack files, and `npm run up` works where its own script
 * lies), node_modules is a link to the checkout's; `stackFiles` replace stacks/Pulumi.<stack>.yaml.
 */
export function projectCopy(dir: string, stackFiles: Record<string, string> = {}): string {
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter(Boolean);
  for (const f of tracked) {
    if (!existsSync(join(ROOT, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  for (const [stack, text] of Object.entries(stackFiles)) writeFileSync(join(dir, "stacks", `Pulumi.${stack}.yaml`), text);
  return dir;
}

/**
 * The environment for the built CLI: its bin/ first on PATH (the engine finds the language host and
 * plugins there), a PULUMI_HOME of the test's own, no downloads and no update check.
 */
export function engineEnv(engine: Engine, home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // The caller's own Pulumi settings (a login, a passphrase) stay out: the test sets its own.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PULUMI_")));
  return {
    ...inherited,
    PATH: `${engine.bin}:${process.env.PATH ?? ""}`,
    PULUMI_HOME: home,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
    ...extra,
  };
}

/**
 * The test images under tags of the engine tests' own (`rpcstack-engine/...`): the image build of
 * any checkout on the same Docker engine removes `rpcstack-e2e/*` tags it did not make, which
 * would pull an image from under a deployment. A tag is only a name: nothing is copied.
 */
export function engineImages<T extends object>(images: T): T {
  const out: Record<string, string> = {};
  for (const [k, ref] of Object.entries(images) as [string, string][]) {
    const tagged = ref.replace(/^rpcstack-e2e\//, "rpcstack-engine/");
    execFileSync("docker", ["tag", ref, tagged]);
    out[k] = tagged;
  }
  return out as T;
}
