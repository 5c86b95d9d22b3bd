/**
 * `npm run up`: deploys the `local` stack in one command, doing every set-up step itself through
 * Pulumi's Automation API. It checks for a Docker daemon, finds a Pulumi CLI (installing a pinned
 * one into this checkout when none is on PATH), uses a file backend in the checkout when there is
 * no Pulumi login, generates the first project key as a secret, runs `pulumi up` with the engine's
 * output streamed, and ends with the endpoints, how to read the key, one relay to try, and the
 * time it took. Everything with a side effect outside this file is injected, for tests.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { LocalWorkspace, PulumiCommand, type LocalWorkspaceOptions, type UpResult } from "@pulumi/pulumi/automation";
import type { SemVer } from "semver";
import { elapsed, programErrors, summary } from "./upReport.js";

/** The CLI installed when none is on PATH: the release that shipped the SDK in package-lock.json. */
export const PULUMI_CLI_VERSION = "3.248.0";
export const STACK = "local";
/** Where the pinned CLI goes, inside the checkout (git-ignored). */
export const CLI_DIR = ".pulumi-cli";
/** State of the file backend used without a Pulumi login (git-ignored), as the shell script had it. */
export const STATE_DIR = ".pulumi-state";
const KEY_NAME = "local";
const INSTALL_DOCS = "https://www.pulumi.com/docs/install/";
const ENGINE_BUILD = "bash scripts/engine/build.sh";

export const USAGE = `usage: npm run up [-- --help]
Deploys the local stack (stacks/Pulumi.local.yaml: a devnet trial chain on this machine's Docker)
and prints its endpoints, how to read the project key, and one curl that relays.
  - no Pulumi CLI on PATH: installs Pulumi CLI v${PULUMI_CLI_VERSION} into ${CLI_DIR}/ in this checkout
  - no Pulumi login: keeps the state in ${STATE_DIR}/ in this checkout (PULUMI_CONFIG_PASSPHRASE
    is used when set, else an empty passphrase)
  - no project key yet: generates one and stores it as a Pulumi secret (rpcstack:projectKeys)
Options:
  --help   this text
Exit: 0 deployed, 1 a step failed (the message says which), 2 bad arguments.`;

/** The slice of an Automation API stack this program uses. */
export interface UpStack {
  getConfig(key: string): Promise<{ value: string; secret?: boolean }>;
  setConfig(key: string, value: { value: string; secret?: boolean }): Promise<void>;
  up(opts: { onOutput: (s: string) => void; onError: (s: string) => void }): Promise<Pick<UpResult, "outputs">>;
}

export interface UpDeps {
  /** The checkout: Pulumi.yaml, stacks/, and where the CLI and state folders go. */
  readonly root: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
  readonly now: () => number;
  /** One sentence on what is missing when no Docker daemon answers; undefined when one does. */
  readonly dockerProblem: () => Promise<string | undefined>;
  /** A Pulumi CLI: on PATH (no root) or installed under root; undefined when there is none. */
  readonly findCli: (root?: string) => Promise<PulumiCommand | undefined>;
  /** Pulumi's installer (PulumiCommand.install): downloads the CLI into root. */
  readonly installCli: (opts: { root: string; version: string }) => Promise<PulumiCommand>;
  /** The backend the CLI is logged in to (`pulumi whoami`'s URL); undefined when it is not. */
  readonly backendUrl: (cli: PulumiCommand, workDir: string) => Promise<string | undefined>;
  readonly openStack: (workDir: string, opts: LocalWorkspaceOptions) => Promise<UpStack>;
  readonly newKey: () => string;
}

export const realDeps = (root: string): UpDeps => ({
  root,
  env: process.env,
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  now: () => Date.now(),
  dockerProblem: () => dockerProblem(),
  findCli: (cliRoot) => PulumiCommand.get(cliRoot ? { root: cliRoot, version: semverOf(PULUMI_CLI_VERSION) } : undefined).catch(() => undefined),
  installCli: ({ root: cliRoot, version }) => PulumiCommand.install({ root: cliRoot, version: semverOf(version) }),
  backendUrl: async (cli, workDir) => {
    const ws = await LocalWorkspace.create({ workDir, pulumiCommand: cli });
    return ws.whoAmI().then(
      (who) => who.url ?? "",
      () => undefined,
    );
  },
  openStack: (workDir, opts) => LocalWorkspace.createOrSelectStack({ stackName: STACK, workDir }, opts),
  newKey: () => randomBytes(32).toString("base64url"),
});

// PulumiCommandOptions.version is a semver.SemVer; semver is a dependency of @pulumi/pulumi.
function semverOf(v: string): SemVer {
  const { SemVer: Ctor } = require("semver") as { SemVer: new (v: string) => SemVer };
  return new Ctor(v);
}

export function dockerProblem(docker = "docker"): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(docker, ["info", "--format", "{{.ServerVersion}}"], { timeout: 20_000 }, (error, stdout) => {
      if (!error && stdout.trim()) return resolve(undefined);
      if ((error as NodeJS.ErrnoException | null)?.code === "ENOENT") {
        return resolve("the local stack runs in Docker and there is no docker command here: install Docker Engine (https://docs.docker.com/engine/install/), start it, and run npm run up again.");
      }
      resolve("Docker is installed but its daemon does not answer (docker info failed): start it (e.g. sudo systemctl start docker) or install Docker Engine (https://docs.docker.com/engine/install/), then run npm run up again.");
    });
  });
}

class Stop extends Error {}

export async function main(argv: string[], deps: UpDeps): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: { help: { type: "boolean" } }, strict: true, allowPositionals: true });
    if (values.help) {
      deps.out(`${USAGE}\n`);
      return 0;
    }
    if (positionals.length) throw new Error(`unexpected argument "${positionals[0]}"`);
  } catch (e) {
    const m = /^Unknown option '([^']+)'/.exec((e as Error).message);
    deps.err(`rpcstack up: ${m ? `unknown option ${m[1]}` : (e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  try {
    return await up(deps);
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    deps.err(`rpcstack: ${e.message}\n`);
    return 1;
  }
}

async function up(deps: UpDeps): Promise<number> {
  const started = deps.now();
  const say = (s: string) => deps.out(`rpcstack: ${s}\n`);
  const rel = (p: string) => relative(deps.root, p) || ".";

  const docker = await deps.dockerProblem();
  if (docker) throw new Stop(docker);

  const { cli, onPath } = await pulumiCli(deps, say, rel);

  // Without a login, state stays in the checkout; a login (or PULUMI_BACKEND_URL) is respected.
  const envVars: Record<string, string> = {};
  let fileBackend = false;
  let backend = deps.env.PULUMI_BACKEND_URL || (await deps.backendUrl(cli, deps.root));
  if (backend === undefined) {
    const dir = join(deps.root, STATE_DIR);
    mkdirSync(dir, { recursive: true });
    backend = envVars.PULUMI_BACKEND_URL = `file://${dir}`;
    fileBackend = true;
    say(`no Pulumi login: keeping the stack's state in ${rel(dir)}/ in this checkout`);
  }
  // A file backend encrypts the stack's secrets with a passphrase, which the CLI refuses to make up:
  // the trial stack's is empty, unless the operator sets their own in the environment.
  if (backend.startsWith("file://") && deps.env.PULUMI_CONFIG_PASSPHRASE === undefined && deps.env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) {
    envVars.PULUMI_CONFIG_PASSPHRASE = "";
    if (!fileBackend) say("file backend without PULUMI_CONFIG_PASSPHRASE: the local stack's secrets use an empty passphrase (set one to keep them)");
  }

  let stack: UpStack;
  try {
    stack = await deps.openStack(deps.root, { pulumiCommand: cli, envVars });
  } catch (e) {
    throw new Stop(`could not select or create stack ${STACK}: ${cliSaid(e)}`);
  }
  say(`stack ${STACK} selected`);

  const keyKey = "rpcstack:projectKeys";
  if (await hasConfig(stack, keyKey)) {
    say(`project keys already set (${keyKey})`);
  } else {
    const keys = [{ name: KEY_NAME, key: deps.newKey() }];
    await stack.setConfig(keyKey, { value: JSON.stringify(keys), secret: true });
    say(`generated project key "${KEY_NAME}", stored as a Pulumi secret (${keyKey} in stacks/Pulumi.${STACK}.yaml)`);
  }

  say(`pulumi up --stack ${STACK}; the engine's output follows`);
  let result: Pick<UpResult, "outputs">;
  let engineSaid = "";
  const keep = (write: (s: string) => void) => (s: string) => ((engineSaid += s), write(s));
  try {
    result = await stack.up({ onOutput: keep(deps.out), onError: keep(deps.err) });
  } catch {
    // The engine printed why above; the program's own words (config, preflight, readiness, smoke) close the run.
    const why = programErrors(engineSaid);
    const took = `pulumi up failed after ${elapsed(deps.now() - started)}`;
    throw new Stop(`${why.length ? `${took}:\n${why.join("\n")}\n` : `${took}; the engine's output above says why. `}Fix that and run npm run up again.`);
  }

  const readCmd = [fileBackend ? backendPrefix(envVars) : "", onPath ? "pulumi" : rel(cli.command), `config get projectKeys --stack ${STACK}`].filter(Boolean).join(" ");
  deps.out(summary(result.outputs, STACK, readCmd, elapsed(deps.now() - started)));
  return 0;
}

async function pulumiCli(deps: UpDeps, say: (s: string) => void, rel: (p: string) => string): Promise<{ cli: PulumiCommand; onPath: boolean }> {
  const onPath = await deps.findCli();
  if (onPath) {
    say(`using the Pulumi CLI on PATH (v${onPath.version ?? "unknown"})`);
    return { cli: onPath, onPath: true };
  }
  const root = join(deps.root, CLI_DIR, PULUMI_CLI_VERSION);
  const earlier = await deps.findCli(root);
  if (earlier) {
    say(`using Pulumi CLI v${earlier.version ?? PULUMI_CLI_VERSION} installed earlier in ${rel(root)}/`);
    return { cli: earlier, onPath: false };
  }
  say(`no Pulumi CLI on PATH: installing Pulumi CLI v${PULUMI_CLI_VERSION} into ${rel(root)}/ (in this checkout, git-ignored) with Pulumi's installer`);
  let cli: PulumiCommand;
  try {
    cli = await deps.installCli({ root, version: PULUMI_CLI_VERSION });
  } catch (e) {
    throw new Stop(
      `could not install Pulumi CLI v${PULUMI_CLI_VERSION} into ${rel(root)}/: ${firstLine((e as Error).message)}. ` +
        `Check this machine's internet access, or install the CLI yourself (${INSTALL_DOCS}), or, where Pulumi's downloads cannot be reached, build it from the Go module proxy with ` +
        `${ENGINE_BUILD} and put its bin/ first on PATH (export PATH="$(${ENGINE_BUILD} --print-dir)/bin:$PATH"); then run npm run up again.`,
    );
  }
  say(`installed Pulumi CLI v${cli.version ?? PULUMI_CLI_VERSION} at ${rel(cli.command)}`);
  return { cli, onPath: false };
}

/** Whether the stack has the key; a missing key is the CLI's "not found", anything else is an error. */
async function hasConfig(stack: UpStack, key: string): Promise<boolean> {
  try {
    await stack.getConfig(key);
    return true;
  } catch (e) {
    const text = String((e as Error).message);
    if (/configuration key .* not found/.test(text)) return false;
    // Never guess: a key that cannot be read (a wrong passphrase) must not be replaced.
    throw new Stop(`could not read ${key} from stack ${STACK}: ${cliSaid(e)}`);
  }
}

/** The CLI's own "error: ..." line from a failed Automation API call, not the SDK's dump of the whole command. */
function cliSaid(e: unknown): string {
  const text = String((e as Error).message);
  return text.split("\n").find((l) => /^\s*error:/.test(l))?.trim() ?? firstLine(text);
}

const backendPrefix = (envVars: Record<string, string>) =>
  Object.entries(envVars)
    .map(([k, v]) => `${k}=${v === "" ? "''" : v}`)
    .join(" ");

const firstLine = (s: string) =>
  s
    .split("\n")
    .map((l) => l.trim())
    .find(Boolean) ?? s;

if (require.main === module) {
  main(process.argv.slice(2), realDeps(join(__dirname, ".."))).then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`rpcstack up: ${(e as Error).stack ?? e}\n`);
      process.exit(1);
    },
  );
}
