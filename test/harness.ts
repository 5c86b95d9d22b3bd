/**
 * Runs the Pulumi program under the SDK's mock engine with a real stack file and records every
 * resource registration: type, name, inputs, parent, dependencies, options and secret inputs.
 */
import { execFileSync } from "node:child_process";
import { GENERATE_KEY } from "../badges/token.js";
import { join } from "node:path";
import { vi } from "vitest";
import { encodeConfigValue, readStackFile } from "../export/stackFile.js";

export const ROOT = join(__dirname, "..");
export type StackName = "local" | "testnet" | "mainnet";

export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  readonly urn: string;
  readonly custom: boolean;
  /** Inputs with secrets unwrapped to their plain values. */
  readonly inputs: Record<string, any>;
  /** Dotted paths of the inputs that arrived as Pulumi secrets. */
  readonly secretInputs: readonly string[];
  readonly parent?: string;
  readonly provider?: string;
  readonly dependencies: readonly string[];
  readonly retainOnDelete: boolean;
  readonly protect: boolean;
  readonly ignoreChanges: readonly string[];
  readonly deleteBeforeReplace: boolean;
  /** Outputs the engine is told to keep as secrets. */
  readonly additionalSecretOutputs: readonly string[];
}

/** An invoke the program made (e.g. `command:local:run`): what the mock engine was asked. */
export interface RecordedInvoke {
  readonly token: string;
  /** Arguments with secrets unwrapped to their plain values. */
  readonly inputs: Record<string, any>;
  /** Names of the resources whose registration had finished when the invoke was made. */
  readonly after: readonly string[];
}

export interface ProgramRun {
  readonly resources: readonly RecordedResource[];
  readonly invokes: readonly RecordedInvoke[];
  readonly outputs: Record<string, unknown>;
  /** Exported outputs that are secrets (their names). */
  readonly secretOutputs: readonly string[];
  /** The first error: the program's own throw, or a failed apply during registration. */
  readonly error?: Error;
  byType(type: string): RecordedResource[];
  one(type: string, name?: string): RecordedResource;
  byUrn(urn: string): RecordedResource | undefined;
}

/** A valid project key list for tests (never a real key). */
export const TEST_PROJECT_KEYS = [
  { name: "ci-first", key: "k".repeat(20) + "0123456789ABCDEF" },
  { name: "ci-second", key: "s".repeat(20) + "FEDCBA9876543210" },
];
export const TEST_SSH_PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nnot-a-real-key\n-----END OPENSSH PRIVATE KEY-----\n";

/** The `rpcstack:*` entries of a stack file, encoded as the Pulumi engine hands them to a program. */
export function stackFileConfig(stack: StackName): Record<string, string> {
  const { entries, encrypted } = readStackFile(ROOT, stack);
  if (encrypted.length) throw new Error(`stacks/Pulumi.${stack}.yaml: ${encrypted.join(", ")} hold encrypted values; tests cannot decrypt them`);
  return entries;
}

export { encodeConfigValue };

export interface RunOptions {
  readonly stack: StackName;
  /** Extra or replacing `rpcstack:` keys (short names), as plain values. */
  readonly config?: Record<string, unknown>;
  /** Keys set as secrets (short names), as plain values. Defaults to test project keys (+ SSH key for ssh hosts). */
  readonly secrets?: Record<string, unknown>;
  /** Keys to drop from the stack file. */
  readonly omit?: readonly string[];
  /** Mocked resource outputs by type, merged over the inputs. */
  readonly state?: (type: string, name: string, inputs: Record<string, any>) => Record<string, any> | undefined;
  /** What the host preflight reports (defaults: a machine that fits every tier). */
  readonly hostFacts?: Partial<HostFactsReport>;
  /** For ssh hosts: the ssh client fails with this exit status and last line instead of reporting. */
  readonly sshFails?: { readonly exit: number; readonly said: string };
}

export interface HostFactsReport {
  cores: number;
  memory_kib: number;
  disk_path: string;
  disk_free_kib: number;
  docker_version: string;
  docker_nofile?: number;
  docker_nofile_raise?: 0 | 1;
  nr_open?: number;
}

export const BIG_HOST: HostFactsReport = {
  cores: 16,
  memory_kib: 64 * 1024 * 1024,
  disk_path: "/var/lib/docker",
  disk_free_kib: 4 * 1024 * 1024 * 1024,
  docker_version: "27.5.1",
};

const factsReport = (facts: HostFactsReport) => Object.entries(facts).map(([k, v]) => `${k}=${v}`).join("\n");

/** What the mock engine answers for invokes: the smoke relays, and the host preflight (local, or over ssh). */
function invokeResult(token: string, inputs: Record<string, any>, facts: HostFactsReport, sshFails: RunOptions["sshFails"]): Record<string, any> {
  if (token !== "command:local:run") return inputs;
  if (inputs.environment?.RPCSTACK_SMOKE_PLAN) {
    // Every planned relay answered with block 1.
    const plan = JSON.parse(inputs.environment.RPCSTACK_SMOKE_PLAN) as { chainId: string; iface: string }[];
    return { stdout: `RPCSTACK_SMOKE ${JSON.stringify({ ok: plan.map((p) => ({ chainId: p.chainId, iface: p.iface, block: 1 })), failed: [] })}\n`, stderr: "" };
  }
  if (String(inputs.command).startsWith("'ssh'")) {
    return { stdout: sshFails ? `${sshFails.said}\nssh_exit=${sshFails.exit}\n` : `${factsReport(facts)}\nssh_exit=0\n`, stderr: "" };
  }
  return { stdout: factsReport(facts), stderr: "" };
}

/** What the mock engine answers for resources whose outputs are not simply their inputs. */
function defaultState(type: string, inputs: Record<string, any>): Record<string, any> {
  if (type === "docker:index/remoteImage:RemoteImage") return { imageId: `${inputs.name}` };
  if (type === "docker:index/container:Container" && inputs.attach) {
    // One-shot containers ran to completion; the sync check reports both nodes synced.
    const synced = { status: "synced", reason: "mock engine" };
    const logs = inputs.name === "rpcstack-sync-check" ? `RPCSTACK_READINESS ${JSON.stringify({ synced: true, l1: synced, l2: synced })}\n` : "";
    return { exitCode: 0, containerLogs: logs };
  }
  if (type === "aws:ec2/eip:Eip") return { publicIp: "198.51.100.20" };
  // The badge signing key's command runs here for real: its output is a key like the one it makes.
  if (type === "command:local:Command" && inputs.create === GENERATE_KEY) return { stdout: execFileSync("sh", ["-c", inputs.create], { encoding: "utf8" }) };
  return {};
}

const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

function secretPaths(value: unknown, prefix = ""): string[] {
  if (typeof value !== "object" || value === null) return [];
  const rec = value as Record<string, unknown>;
  if (rec[SECRET_SIG_KEY] === SECRET_SIG) return [prefix || "(root)"];
  return Object.entries(rec).flatMap(([k, v]) => secretPaths(v, prefix ? `${prefix}.${k}` : k));
}

const UNSETTLED = Symbol("unsettled");

async function untilSettled<T>(p: Promise<T>, errors: readonly Error[], timeoutMs = 10_000): Promise<T | typeof UNSETTLED> {
  const deadline = Date.now() + timeoutMs;
  let done = false;
  let value: T | typeof UNSETTLED = UNSETTLED;
  p.then((v) => ((value = v), (done = true)));
  while (!done && !errors.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  return value;
}

function unwrapSecrets(value: any): any {
  if (typeof value !== "object" || value === null) return value;
  if (value[SECRET_SIG_KEY] === SECRET_SIG) return unwrapSecrets(value.value);
  if (Array.isArray(value)) return value.map(unwrapSecrets);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrapSecrets(v)]));
}

export async function runProgram(opts: RunOptions): Promise<ProgramRun> {
  vi.resetModules();
  const pulumi = await import("@pulumi/pulumi");
  const resources: RecordedResource[] = [];
  const invokes: RecordedInvoke[] = [];
  await pulumi.runtime.setMocks(
    {
      newResource: (args) => ({
        id: args.custom ? `${args.name}-id` : undefined,
        state: {
          ...args.inputs,
          ...defaultState(args.type, unwrapSecrets(args.inputs)),
          ...(opts.state?.(args.type, args.name, args.inputs) ?? {}),
        },
      }),
      call: (args) => {
        const inputs = unwrapSecrets(args.inputs);
        // The mock engine gets invoke arguments without their secret marks: invokes keep nothing in the state.
        invokes.push({ token: args.token, inputs, after: resources.map((r) => r.name) });
        return invokeResult(args.token, inputs, { ...BIG_HOST, ...opts.hostFacts }, opts.sshFails);
      },
    },
    "rpcstack",
    opts.stack,
  );

  let pending = 0;
  const monitor = pulumi.runtime.getMonitor() as any;
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, callback: (err: any, res: any) => void) => {
    pending++;
    register(req, (err: any, res: any) => {
      if (!err) {
        const raw = req.getObject()?.toJavaScript() ?? {};
        resources.push({
          type: req.getType(),
          name: req.getName(),
          urn: res.getUrn(),
          custom: req.getCustom(),
          inputs: unwrapSecrets(pulumi.runtime.deserializeProperties(req.getObject())),
          secretInputs: secretPaths(raw),
          parent: req.getParent() || undefined,
          provider: req.getProvider() || undefined,
          dependencies: req.getDependenciesList(),
          retainOnDelete: req.getRetainondelete?.() ?? false,
          protect: req.getProtect?.() ?? false,
          ignoreChanges: req.getIgnorechangesList?.() ?? [],
          deleteBeforeReplace: req.getDeletebeforereplace?.() ?? false,
          additionalSecretOutputs: req.getAdditionalsecretoutputsList?.() ?? [],
        });
      }
      pending--;
      callback(err, res);
    });
  };

  const config: Record<string, string> = {};
  for (const [k, v] of Object.entries(stackFileConfig(opts.stack))) {
    if (!opts.omit?.includes(k.replace(/^rpcstack:/, ""))) config[k] = v;
  }
  for (const [k, v] of Object.entries(opts.config ?? {})) config[`rpcstack:${k}`] = encodeConfigValue(v);
  const hostKind = JSON.parse(config["rpcstack:host"] ?? "{}").kind;
  const secrets = opts.secrets ?? {
    projectKeys: TEST_PROJECT_KEYS,
    ...(hostKind === "ssh" ? { sshPrivateKey: TEST_SSH_PRIVATE_KEY } : {}),
  };
  for (const [k, v] of Object.entries(secrets)) config[`rpcstack:${k}`] = encodeConfigValue(v);
  pulumi.runtime.setAllConfig(config, Object.keys(secrets).map((k) => `rpcstack:${k}`));

  // A failed apply (a host preflight that throws) surfaces as an unhandled rejection under
  // mocks, where a real `pulumi up` would stop: collect those as the run's errors.
  const asyncErrors: Error[] = [];
  const saved = process.listeners("unhandledRejection");
  process.removeAllListeners("unhandledRejection");
  const collect = (reason: unknown) => asyncErrors.push(reason instanceof Error ? reason : new Error(String(reason)));
  process.on("unhandledRejection", collect);

  let error: Error | undefined;
  const outputs: Record<string, unknown> = {};
  const secretOutputs: string[] = [];
  try {
    // The program is an async function whose result is the stack's outputs, as Pulumi runs it.
    // (vitest imports it as an ES module; TypeScript types a CommonJS one's default as the whole module)
    const mod = (await import("../index.js")) as unknown as { default: () => Promise<Record<string, unknown>> };
    const program = await mod.default();
    for (const [k, v] of Object.entries(program)) {
      if (pulumi.Output.isInstance(v)) {
        // An output fed by a failed registration never resolves: stop at the first error.
        const value = await untilSettled(new Promise((r) => (v as any).apply(r)), asyncErrors);
        if (value === UNSETTLED) continue;
        if (await (v as any).isSecret) secretOutputs.push(k);
        outputs[k] = value;
      } else {
        outputs[k] = v;
      }
    }
  } catch (e) {
    error = e as Error;
  }
  // Let every registration the program started reach the mock before reading the record.
  try {
    // Registrations behind a failed one never finish; an error ends the wait.
    const deadline = Date.now() + 10_000;
    for (let idle = 0; idle < 5 && Date.now() < deadline; idle = pending === 0 ? idle + 1 : 0) {
      await new Promise((r) => setTimeout(r, 5));
      if (asyncErrors.length && Date.now() + 9_500 > deadline) break;
    }
  } finally {
    process.removeListener("unhandledRejection", collect);
    for (const l of saved) process.on("unhandledRejection", l as (...args: any[]) => void);
  }
  error ??= asyncErrors[0];

  const byType = (type: string) => resources.filter((r) => r.type === type);
  return {
    resources,
    invokes,
    outputs,
    secretOutputs,
    error,
    byType,
    one(type, name) {
      const found = byType(type).filter((r) => name === undefined || r.name === name);
      if (found.length !== 1) {
        throw new Error(`expected one ${type}${name ? ` named ${name}` : ""}, found ${found.length}: ${found.map((r) => r.name).join(", ")}`);
      }
      return found[0];
    },
    byUrn: (urn) => resources.find((r) => r.urn === urn),
  };
}
