/**
 * The real Pulumi engine that scripts/engine/build.sh builds (CLI, Node.js language host, and the
 * provider plugins it could build), for tests that run it. `.ci/run` builds it before the tests.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "vitest";
import { ROOT } from "../harness.js";

export interface EngineManifest {
  readonly cli: string;
  readonly languageHost: string;
  readonly plugins: Record<string, EnginePlugin>;
}

export interface EnginePlugin {
  /** The pinned release the engine is asked for. */
  readonly version: string;
  readonly built: boolean;
  readonly note: string;
  /** Where the binary is, when built. */
  readonly path?: string;
  /** What the binary says it is (GetPluginInfo). */
  readonly reported?: string;
  /** The override that let another release stand in for the pin (RPCSTACK_ACCEPT_PLUGIN=...). */
  readonly accepted?: string;
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
 * The engine with the docker and command plugins the deploying tests need, or an error saying why
 * not; a plugin that stands in for its pin (RPCSTACK_ACCEPT_PLUGIN) is said, so a run shows it.
 */
export function engineWithPlugins(): Engine {
  const found = findEngine();
  if ("missing" in found) throw new Error(found.missing);
  const unbuilt = ["docker", "command"].filter((p) => !found.manifest.plugins[p]?.built);
  if (unbuilt.length) throw new Error(`the engine has no ${unbuilt.join(", ")} plugin: ${unbuilt.map((p) => found.manifest.plugins[p]?.note).join("; ")}`);
  for (const [name, p] of Object.entries(found.manifest.plugins)) {
    if (p.accepted) console.warn(`engine: plugin ${name} is v${p.reported}, not the pinned v${p.version} (${p.accepted})`);
  }
  return found;
}

/** The engine with the Kubernetes provider plugin, or an error saying why not. */
export function engineWithKubernetes(): Engine {
  const found = findEngine();
  if ("missing" in found) throw new Error(found.missing);
  const k8s = found.manifest.plugins.kubernetes;
  if (!k8s?.built) throw new Error(`the engine has no kubernetes plugin: ${k8s?.note ?? "not in engine.json"}`);
  return found;
}

/**
 * The CLI in a project copy: `run` gives the status and output, `ok` expects success (its message
 * adds `context()`, e.g. a cluster's logs), `okAsync` runs without holding the test's event loop,
 * so clients the test runs meanwhile keep calling.
 */
export function pulumiCli(engine: () => Engine, cwd: () => string, env: () => NodeJS.ProcessEnv, o: { timeoutMs: number; context?: () => string }) {
  const cli = () => join(engine().bin, "pulumi");
  const run = (args: string[], input?: string) => {
    const r = spawnSync(cli(), [...args, "--non-interactive"], { cwd: cwd(), env: env(), input, encoding: "utf8", timeout: o.timeoutMs, maxBuffer: 64 << 20 });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  const ok = (args: string[], input?: string) => {
    const r = run(args, input);
    expect(r.status, `pulumi ${args.join(" ")}:\n${r.out}${o.context ? `\n${o.context()}` : ""}`).toBe(0);
    return r.out;
  };
  const okAsync = (args: string[]) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(cli(), [...args, "--non-interactive"], { cwd: cwd(), env: env(), stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (out += d));
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`pulumi ${args.join(" ")} exited ${code}:\n${out}`))));
    });
  return { run, ok, okAsync };
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
 * The environment for the built CLI: its bin/ first on PATH (the engine finds the language host
 * there), a PULUMI_HOME of the test's own holding the plugins, no downloads and no update check.
 */
export function engineEnv(engine: Engine, home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // The caller's own Pulumi settings (a login, a passphrase) stay out: the test sets its own.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("PULUMI_")));
  // The plugins go into this PULUMI_HOME's plugin cache under their pinned versions, as build.sh
  // installs them for a user: the engine finds them by exact version, with no "from $PATH" warning.
  for (const [name, p] of Object.entries(engine.manifest.plugins)) {
    if (p.built && p.path) execFileSync(join(engine.bin, "pulumi"), ["plugin", "install", "resource", name, p.version, "--file", p.path], { env: { ...inherited, PULUMI_HOME: home }, stdio: "ignore" });
  }
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

/** The engine's output carries the program's errors as messages: no stack trace, no exception dump. */
export function expectNoStackTrace(out: string): void {
  expect(out).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  expect(out).not.toContain("<ref *");
  expect(out).not.toContain("unhandled exception");
}

/** The Docker objects of a kind a stack named: `rpcstack` and `rpcstack-*` (containers stopped ones too). */
export const stackObjects = (kind: "container" | "network" | "volume"): string[] =>
  execFileSync("docker", [kind, "ls", ...(kind === "container" ? ["-a", "--format", "{{.Names}}"] : ["--format", "{{.Name}}"])], { encoding: "utf8" })
    .split("\n")
    .filter((n) => /^rpcstack(-|$)/.test(n));
