import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
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
  /** The gateway's container: the relays go out once it runs. */
  readonly gateway: pulumi.Resource;
  /**
   * For a gateway with a self-signed certificate (no domain): where to read it, so the relays trust
   * exactly it. The gateway container's name, and the ssh host it runs on (none for a local host).
   */
  readonly selfSigned?: { readonly container: pulumi.Input<string>; readonly ssh?: SshTarget };
}

export const parseSmokeOutput = (stdout: string | undefined) => lastTaggedJson<SmokeResult>(stdout, SMOKE_PREFIX);

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
    const commandLine = selfSigned
      ? pulumi.output(selfSigned.container).apply((c) => withTrustedCertificate(certificateReadCommand(c, GATEWAY_PATHS.certFile, selfSigned.ssh), node))
      : node;
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
          .stdout.apply((out) => parseSmokeOutput(out) ?? { ok: [], failed: [{ chainId: "-", iface: "-", error: "the smoke test printed no result" }] });
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
