/**
 * A stand-in Pulumi CLI for tests of `npm run up`: an executable `bin/pulumi` (Node) in a temp
 * folder that answers what the Automation API of @pulumi/pulumi 3.248 asks (read from
 * automation/{cmd,localWorkspace,stack}.js): `version`, `whoami --json`, `stack select`,
 * `stack init`, `config get [--json]`, `config set --secret [-- value]`, `up`, `stack output --json
 * [--show-secrets]` and `stack history --json`. It records every call (arguments and the backend
 * environment) and keeps stacks and config in a JSON file, so a second run sees the first.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface FakeCall {
  readonly args: string[];
  readonly env: { PULUMI_BACKEND_URL?: string; PULUMI_CONFIG_PASSPHRASE?: string };
}

export interface FakeState {
  loggedIn: boolean;
  stacks: string[];
  config: Record<string, Record<string, { value: string; secret: boolean }>>;
  /** What `stack output --json --show-secrets` prints after an up. */
  outputs: Record<string, unknown>;
  /** `up` exits 255 with this on stderr when set. */
  upFails?: string;
  /** `config get` fails with this on stderr when set (e.g. a wrong passphrase). */
  configGetFails?: string;
  /** The backend `whoami` reports when logged in (default Pulumi Cloud). */
  loginUrl?: string;
  /** `stack init` fails with this on stderr when set. */
  stackInitFails?: string;
}

export interface FakePulumi {
  /** The folder holding bin/pulumi: what PulumiCommand.get({ root }) takes. */
  readonly root: string;
  readonly command: string;
  calls(): FakeCall[];
  state(): FakeState;
}

const SCRIPT = String.raw`#!/usr/bin/env node
// Fake Pulumi CLI for tests (test/support/fakePulumi.ts). Not the real CLI.
const fs = require("fs");
const path = require("path");
const dir = path.join(__dirname, "..");
const stateFile = path.join(dir, "state.json");
const args = process.argv.slice(2);
fs.appendFileSync(path.join(dir, "calls.jsonl"), JSON.stringify({ args, env: {
  PULUMI_BACKEND_URL: process.env.PULUMI_BACKEND_URL,
  PULUMI_CONFIG_PASSPHRASE: process.env.PULUMI_CONFIG_PASSPHRASE,
} }) + "\n");
const state = JSON.parse(fs.readFileSync(stateFile, "utf8"));
const save = () => fs.writeFileSync(stateFile, JSON.stringify(state));
const fail = (msg) => { process.stderr.write("error: " + msg + "\n"); process.exit(255); };
const flag = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const words = args.filter((a) => !a.startsWith("--"));
const stack = flag("--stack");
const is = (...w) => w.every((x, i) => words[i] === x);

if (is("version")) { process.stdout.write("v3.248.0\n"); process.exit(0); }
if (is("whoami")) {
  if (!state.loggedIn) fail("PULUMI_ACCESS_TOKEN must be set for login during non-interactive CLI sessions");
  process.stdout.write(JSON.stringify({ user: "alice", url: state.loginUrl || "https://app.pulumi.com" }) + "\n");
  process.exit(0);
}
if (is("stack", "select")) {
  if (!state.stacks.includes(stack)) fail("no stack named '" + stack + "' found");
  process.exit(0);
}
if (is("stack", "init")) {
  const name = words[2];
  if (state.stacks.includes(name)) fail("stack '" + name + "' already exists");
  if (state.stackInitFails) fail(state.stackInitFails);
  // The real CLI's words (v3.248.0) when a file backend's stack would need a passphrase.
  const backend = process.env.PULUMI_BACKEND_URL || (state.loggedIn ? state.loginUrl || "" : "");
  if (backend.startsWith("file://") && process.env.PULUMI_CONFIG_PASSPHRASE === undefined && process.env.PULUMI_CONFIG_PASSPHRASE_FILE === undefined) {
    fail("could not create secrets manager for new stack: passphrase must be set with PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE environment variables");
  }
  state.stacks.push(name); state.config[name] = {}; save(); process.exit(0);
}
if (is("config", "get")) {
  if (state.configGetFails) fail(state.configGetFails);
  const v = (state.config[stack] || {})[words[2]];
  if (!v) fail("configuration key '" + words[2] + "' not found for stack '" + stack + "'");
  // The real CLI prints the value itself without --json.
  process.stdout.write((args.includes("--json") ? JSON.stringify(v.value) : v.value) + "\n"); process.exit(0);
}
if (is("config", "set")) {
  // Without a value on the command line the real CLI reads it from standard input.
  const value = args.includes("--") ? args[args.indexOf("--") + 1] : fs.readFileSync(0, "utf8");
  state.config[stack][words[2]] = { value, secret: args.includes("--secret") }; save(); process.exit(0);
}
if (is("up")) {
  process.stdout.write("Updating (" + stack + ")\n\n");
  process.stdout.write("warning: rpcstack: network devnet is a private trial chain on this machine\n");
  if (state.upFails) fail(state.upFails);
  process.stdout.write(" +  rpcstack:index:RpcProvider rpcstack created\n\nResources:\n    + 30 created\n\nDuration: 1m12s\n");
  state.upDone = true; save(); process.exit(0);
}
if (is("stack", "output")) {
  // No output of the program is a secret, so the masked and the --show-secrets answers agree.
  process.stdout.write(JSON.stringify(state.upDone ? state.outputs : {}) + "\n"); process.exit(0);
}
if (is("stack", "history")) {
  process.stdout.write(JSON.stringify(state.upDone ? [{ version: 1, kind: "update", startTime: "2026-11-23T08:00:00.000Z", endTime: "2026-11-23T08:01:12.000Z", message: "", environment: {}, config: {}, result: "succeeded", resourceChanges: { create: 30 } }] : []) + "\n");
  process.exit(0);
}
fail("fake pulumi: unexpected arguments " + JSON.stringify(args));
`;

export function makeFakePulumi(root: string, initial: Partial<FakeState> = {}): FakePulumi {
  mkdirSync(join(root, "bin"), { recursive: true });
  const command = join(root, "bin", "pulumi");
  writeFileSync(command, SCRIPT);
  chmodSync(command, 0o755);
  const state: FakeState = { loggedIn: false, stacks: [], config: {}, outputs: {}, ...initial };
  writeFileSync(join(root, "state.json"), JSON.stringify(state));
  writeFileSync(join(root, "calls.jsonl"), "");
  return {
    root,
    command,
    calls: () =>
      readFileSync(join(root, "calls.jsonl"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as FakeCall),
    state: () => JSON.parse(readFileSync(join(root, "state.json"), "utf8")) as FakeState,
  };
}
