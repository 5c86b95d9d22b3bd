import * as pulumi from "@pulumi/pulumi";
import type { ProjectKey, StackSettings } from "../config/index.js";
import { planStack, smokePlan } from "../plan/index.js";
import { AwsHost } from "./awsHost.js";
import { Gateway } from "./gateway.js";
import type { Host } from "./host.js";
import { Indexer } from "./indexer.js";
import { SmokeTest } from "./smokeTest.js";
import { providerManifest, type ProviderManifest } from "../manifest/provider.js";
import { L1Node } from "./l1Node.js";
import { L2Node } from "./l2Node.js";
import { LocalHost } from "./localHost.js";
import { SshHost } from "./sshHost.js";
import { SyncReadiness } from "./syncReadiness.js";

export interface RpcProviderArgs {
  /** The validated, non-secret stack settings (config/). */
  readonly settings: StackSettings;
  /** Project keys, as a Pulumi secret. */
  readonly projectKeys: pulumi.Input<readonly ProjectKey[]>;
  /** SSH private key for `ssh` hosts, as a Pulumi secret; required for them, refused otherwise. */
  readonly sshPrivateKey?: pulumi.Input<string>;
}

/** Everything one RPC provider runs: host, L1 and L2 nodes, indexer, readiness gate and gateway. */
export class RpcProvider extends pulumi.ComponentResource {
  readonly network: pulumi.Output<string>;
  readonly tier: pulumi.Output<string>;
  readonly host: Host;
  readonly l1: L1Node;
  readonly l2: L2Node;
  readonly indexer?: Indexer;
  readonly readiness: SyncReadiness;
  readonly gateway: Gateway;
  readonly smokeTest: SmokeTest;
  /** What to submit when applying to a provider program (no keys in it). */
  readonly providerManifest: pulumi.Output<ProviderManifest>;

  constructor(name: string, args: RpcProviderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:RpcProvider", name, {}, opts);
    const s = args.settings;
    if (s.host.kind === "ssh" && args.sshPrivateKey === undefined) {
      throw new pulumi.ResourceError("RpcProvider: host kind ssh needs sshPrivateKey (rpcstack:sshPrivateKey)", this);
    }
    if (s.host.kind !== "ssh" && args.sshPrivateKey !== undefined) {
      throw new pulumi.ResourceError(`RpcProvider: sshPrivateKey is only for host kind ssh, not ${s.host.kind}`, this);
    }
    // Said where an operator looks during `pulumi up`: the engine's diagnostics.
    if (s.network.dev) pulumi.log.warn(s.network.dev.banner, this);
    const plan = planStack(s);
    this.host = createHost(`${name}-host`, args, this);
    const provider = this.host.dockerProvider;

    this.l1 = new L1Node(`${name}-l1`, { role: plan.l1, provider }, { parent: this });
    const networkName = this.l1.networkName;
    this.l2 = new L2Node(`${name}-l2`, { role: plan.l2, provider, networkName, l1: this.l1.executionContainer }, { parent: this });
    const indexer = plan.l2.services.indexer;
    if (indexer) {
      this.indexer = new Indexer(`${name}-indexer`, { service: indexer, provider, networkName, l2: this.l2.container }, { parent: this });
    }
    this.readiness = new SyncReadiness(
      `${name}-readiness`,
      { settings: s, role: plan.readiness, provider, networkName, nodes: [...this.l1.containers, this.l2.container] },
      { parent: this },
    );
    this.gateway = new Gateway(
      `${name}-gateway`,
      {
        settings: s,
        role: plan.gateway,
        compiled: plan.gatewayConfig.compiled,
        surface: plan.surface,
        projectKeys: args.projectKeys,
        provider,
        networkName,
        readiness: this.readiness.gate,
        publicAddress: this.host.publicAddress,
      },
      { parent: this },
    );
    this.smokeTest = new SmokeTest(
      `${name}-smoke`,
      { settings: s, checks: smokePlan(plan.gatewayConfig.chains), projectKeys: args.projectKeys, baseUrl: plan.surface.baseUrl, gateway: this.gateway.container },
      { parent: this },
    );
    this.providerManifest = pulumi.output(providerManifest(s, plan.surface));
    this.network = pulumi.output(s.network.name);
    this.tier = pulumi.output(s.tier.name);
    this.registerOutputs({ network: this.network, tier: this.tier, publicAddress: this.host.publicAddress });
  }
}

function createHost(name: string, args: RpcProviderArgs, parent: pulumi.Resource): Host {
  const { host, tier, retainData } = args.settings;
  switch (host.kind) {
    case "aws":
      return new AwsHost(name, { ...host, tier, retainData }, { parent });
    case "ssh":
      return new SshHost(name, { ...host, tier, privateKey: args.sshPrivateKey! }, { parent });
    case "local":
      return new LocalHost(name, { tier }, { parent });
  }
}
