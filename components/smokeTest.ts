import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { OperatorError } from "./operatorError.js";
import type { ProjectKey, StackSettings } from "../config/index.js";
import type { SshTarget } from "../hosts/preflight.js";
import { GATEWAY_PATHS } from "../services/gateway.js";
import { certificateReadCommand, withTrustedCertificate } from "../smoke/trust.js";
import type { SmokeCheck } from "../smoke/plan.js";
import { SMOKE_PREFIX, type SmokeResult } from "../smoke/result.js";
import { bundleSource } from "./bundle.js";
import { lastTaggedJson } from "./taggedOutput.js";

export interface SmokeTestArgs {
  readonly settings: StackSettings;
  /** The relays to make, one per chain and gateway path interface (plan/views.ts). */
  readonly checks: readonly SmokeCheck[];
  /** Project keys (a Pulumi secret); the first one is used. */
  readonly projectKeys: pulumi.Input<readonly ProjectKey[]>;
  /** The gateway as users reach it, e.g. https://rpc.example.com. */
  readonly baseUrl: string;
  /** The gateway's key sync: the relays go out once the keys are live. */
  readonly gateway: pulumi.Resource;
  /**
   * For a gateway with a self-signed certificate (no domain): where to read it, so the relays trust
   * exactly it. The gateway container's name, and the ssh host it runs on (none for a local host).
   */
  readonly selfSigned?: { readonly container: pulumi.Input<string>; readonly ssh?: SshTarget };
}

export const parseSmokeOutput = (stdout: string | undefined) => lastTaggedJson<SmokeResult>(stdout, SMOKE_PREFIX);

const EXIT_PREFIX = "RPCSTACK_SMOKE_EXIT=";

/** The relays' shell command with its error output and exit status on stdout, where the invoke returns them. */
export const smokeCommand = (relays: string) => `(\n${relays}\n) 2>&1; echo "${EXIT_PREFIX}$?"`;

/**
 * What the relays' output means for the update: their result, or the error that fails it (a
 * relay that failed, unless only reporting; or no result at all, with the output's last lines).
 */
export function smokeVerdict(stdout: string, reportOnly: boolean): { result: SmokeResult; error?: string } {
  const parsed = parseSmokeOutput(stdout);
  const exit = Number(new RegExp(`^${EXIT_PREFIX}(\\d+)$`, "m").exec(stdout)?.[1] ?? "0");
  const said = stdout
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith(SMOKE_PREFIX) && !l.startsWith(EXIT_PREFIX))
    .slice(-5)
    .join("\n");
  const result = parsed ?? { ok: [], failed: [{ chainId: "-", iface: "-", error: said || "the smoke test printed no result" }] };
  if (reportOnly) return { result };
  if (parsed?.failed.length) {
    return { result, error: `rpcstack: the smoke test through the gateway failed: ${parsed.failed.map((f) => `${f.chainId} ${f.iface}: ${f.error}`).join("; ")}` };
  }
  if (!parsed || exit !== 0) return { result, error: `rpcstack: the smoke test through the gateway did not run (exit ${exit}):\n${said || "no output"}` };
  return { result };
}

/**
 * The operator guide's "do a test transaction", on every `pulumi up`: one relay per chain and
 * interface through the public gateway with the client library, from the machine running
 * Pulumi. Any failure fails the update, naming the chain and interface; with readiness.wait
 * off (nodes may still be syncing, so the gateway answers 503) it only reports.
 *
 * The relays are an invoke, not a resource: they run on every update without leaving anything in
 * the state that a preview would then see as changed; a preview makes none (its results are unknown).
 */
export class SmokeTest extends pulumi.ComponentResource {
  /** Head block per chain and interface, as the relays saw it. */
  readonly blockNumbers: pulumi.Output<Record<string, Record<string, number>>>;
  readonly failures: pulumi.Output<SmokeResult["failed"]>;

  constructor(name: string, args: SmokeTestArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:SmokeTest", name, {}, opts);
    const reportOnly = !args.settings.readiness.wait;
    const node = `node - ${reportOnly ? "--report-only" : ""}`.trim();
    const selfSigned = args.selfSigned;
    const relays = selfSigned
      ? pulumi.output(selfSigned.container).apply((c) => withTrustedCertificate(certificateReadCommand(c, GATEWAY_PATHS.certFile, selfSigned.ssh), node))
      : pulumi.output(node);
    // An invoke that fails says only "exit status 1", without what the relays said: everything
    // goes to stdout with the exit status, and the failure is named below.
    const commandLine = relays.apply((r) => smokeCommand(r));
    const result: pulumi.Output<SmokeResult> = pulumi.runtime.isDryRun()
      ? (pulumi.output(pulumi.unknown) as pulumi.Output<SmokeResult>)
      : command.local
          .runOutput(
            {
              command: commandLine,
              interpreter: ["/bin/sh", "-c"],
              stdin: bundleSource("smoke/run.ts"),
              environment: {
                RPCSTACK_SMOKE_BASE: args.baseUrl,
                RPCSTACK_SMOKE_PLAN: JSON.stringify(args.checks),
                RPCSTACK_SMOKE_KEY: pulumi.secret(pulumi.output(args.projectKeys).apply((k) => k[0].key)),
              },
              logging: "stderr",
            },
            { parent: this, dependsOn: [args.gateway] },
          )
          .stdout.apply((out) => {
            const verdict = smokeVerdict(out, reportOnly);
            if (verdict.error) throw new OperatorError(verdict.error, this);
            return verdict.result;
          });
    // The invoke's result is secret because the key went in; what it reports holds no key.
    const report = pulumi.unsecret(result);
    this.blockNumbers = report.apply((r) => {
      const out: Record<string, Record<string, number>> = {};
      for (const ok of r.ok) (out[ok.chainId] ??= {})[ok.iface] = ok.block;
      return out;
    });
    this.failures = report.apply((r) => r.failed);
    this.registerOutputs({ blockNumbers: this.blockNumbers, failures: this.failures });
  }
}
