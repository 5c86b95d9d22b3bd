import * as pulumi from "@pulumi/pulumi";
import { INSTANCE_TYPES, MAIN_HOST, memoryWarning, stackSizing, type L1Endpoint, type ProjectKey, type StackSettings } from "../config/index.js";
import { BADGE_PATH } from "../gateway/badgeContract.js";
import { furtherHostIngress, planStack, smokePlan } from "../plan/index.js";
import { hostTier } from "../hosts/preflight.js";
import { AwsHost } from "./awsHost.js";
import { Gateway } from "./gateway.js";
import type { Host } from "./host.js";
import { Indexer } from "./indexer.js";
import { SmokeTest } from "./smokeTest.js";
import { providerManifest, type ProviderManifest } from "../manifest/provider.js";
import type { L1Node } from "./l1Node.js";
import type { L2Node } from "./l2Node.js";
import { deployFleet, type Fleet } from "./fleet.js";
import { LocalHost } from "./localHost.js";
import { Monitoring } from "./monitoring.js";
import { SshHost } from "./sshHost.js";
import { badgeSigningKey, secretEnvironment } from "./stackSecrets.js";
import { SyncReadiness } from "./syncReadiness.js";

export interface RpcProviderArgs {
  /** The validated, non-secret stack settings (config/). */
  readonly settings: StackSettings;
  /** Project keys, as a Pulumi secret. */
  readonly projectKeys: pulumi.Input<readonly ProjectKey[]>;
  /** SSH private key for `ssh` hosts, as a Pulumi secret; required for them, refused otherwise. */
  readonly sshPrivateKey?: pulumi.Input<string>;
  /** An external L1's URLs (`l1.external`), as a Pulumi secret; required with it, refused otherwise. */
  readonly l1Endpoint?: pulumi.Input<L1Endpoint>;
}

/** Everything one RPC provider runs: host, L1 and L2 nodes, indexer, readiness gate and gateway. */
export class RpcProvider extends pulumi.ComponentResource {
  readonly network: pulumi.Output<string>;
  readonly tier: pulumi.Output<string>;
  readonly host: Host;
  /** Every host nodes run on, by name (`main`: the stack's own). */
  readonly hosts: ReadonlyMap<string, Host>;
  /** Every node, with the steps of rolling upgrades. */
  readonly fleet: Fleet;
  /** Each layer's first node. */
  readonly l1: L1Node;
  readonly l2: L2Node;
  readonly indexer?: Indexer;
  readonly readiness: SyncReadiness;
  readonly gateway: Gateway;
  readonly smokeTest: SmokeTest;
  /** Prometheus with rpcstack's rules (rpcstack:monitoring), else undefined. */
  readonly monitoring?: Monitoring;
  /** What to submit when applying to a provider program (no keys in it). */
  readonly providerManifest: pulumi.Output<ProviderManifest>;
  /** Where pages ask for badges (`badges`), else undefined. */
  readonly badgeServerUrl?: pulumi.Output<string>;

  constructor(name: string, args: RpcProviderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:RpcProvider", name, {}, opts);
    const s = args.settings;
    const ssh = s.host.kind === "ssh" || Object.values(s.hosts).some((h) => h.kind === "ssh");
    if (ssh && args.sshPrivateKey === undefined) {
      throw new pulumi.ResourceError("RpcProvider: host kind ssh needs sshPrivateKey (rpcstack:sshPrivateKey)", this);
    }
    if (!ssh && args.sshPrivateKey !== undefined) {
      throw new pulumi.ResourceError(`RpcProvider: sshPrivateKey is only for host kind ssh, not ${s.host.kind}`, this);
    }
    // Said where an operator looks during `pulumi up`: the engine's diagnostics.
    if (s.network.dev) pulumi.log.warn(s.network.dev.banner, this);
    if (s.l1.external !== (args.l1Endpoint !== undefined)) {
      throw new pulumi.ResourceError("RpcProvider: settings.l1.external and l1Endpoint (rpcstack:l1.external) go together", this);
    }
    const badgeKey = badgeSigningKey(name, s, this);
    const { nodes: secrets, gateway: gatewaySecrets } = secretEnvironment(args.l1Endpoint, badgeKey);
    const plan = planStack(s);
    this.host = createHost(`${name}-host`, args, this);
    const provider = this.host.dockerProvider;
    // Further hosts (rpcstack:hosts) nodes are placed on, each checked against its own tier.
    this.hosts = new Map<string, Host>([[MAIN_HOST, this.host], ...plan.hosts.map((h) => [h.host, createFurtherHost(`${name}-host-${h.host}`, args, h.host, this)] as const)]);

    this.fleet = deployFleet(name, { plan, hosts: this.hosts, secrets }, this);
    this.l1 = this.fleet.l1[0];
    this.l2 = this.fleet.l2[0];
    const networkName = this.fleet.networks.get(MAIN_HOST)!;
    const indexer = plan.l2.services.indexer;
    if (indexer) {
      this.indexer = new Indexer(`${name}-indexer`, { service: indexer, provider, networkName, l2: this.l2.container }, { parent: this });
    }
    this.readiness = new SyncReadiness(
      `${name}-readiness`,
      { settings: s, role: plan.readiness, provider, networkName, nodes: [...this.fleet.containers], secrets, volumes: this.fleet.volumes.get(MAIN_HOST) ?? new Map() },
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
        l1Endpoint: args.l1Endpoint,
        badgePublicKey: badgeKey?.publicKeyPem,
        secrets: gatewaySecrets,
      },
      { parent: this },
    );
    this.smokeTest = new SmokeTest(
      `${name}-smoke`,
      {
        settings: s,
        checks: smokePlan(plan.gatewayConfig.chains),
        projectKeys: args.projectKeys,
        baseUrl: plan.surface.baseUrl,
        gateway: this.gateway.keySync,
        // Without a domain the gateway's certificate is self-signed: the relays trust exactly it.
        selfSigned: s.gateway.domain ? undefined : { container: this.gateway.containerName, ssh: s.host.kind === "ssh" ? s.host : undefined },
      },
      { parent: this },
    );
    if (plan.monitoring) {
      this.monitoring = new Monitoring(`${name}-monitoring`, { plan: plan.monitoring, provider, networkName, after: [this.gateway.container] }, { parent: this });
    }
    this.providerManifest = pulumi.output(providerManifest(s, plan.surface));
    if (s.badges) this.badgeServerUrl = pulumi.output(`${plan.surface.baseUrl}${BADGE_PATH}`);
    this.network = pulumi.output(s.network.name);
    this.tier = pulumi.output(s.tier.name);
    this.registerOutputs({ network: this.network, tier: this.tier, publicAddress: this.host.publicAddress });
  }
}

/** A further host (`hosts.<name>`), sized by its own tier and the nodes placed on it. */
function createFurtherHost(name: string, args: RpcProviderArgs, hostName: string, parent: pulumi.Resource): Host {
  const s = args.settings;
  const h = s.hosts[hostName];
  const z = stackSizing(s, hostName);
  const tier = hostTier(h.tier, h.diskGB);
  if (h.kind === "aws") {
    const needs = { diskGB: h.diskGB, diskIops: h.diskIops, iops: z?.iops, throughputMBps: z?.throughputMBps, memoryGiB: z?.memoryGiB };
    const aws = new AwsHost(name, { ...h, tier, retainData: s.retainData, needs, privateAddress: h.privateAddress, ingress: furtherHostIngress(s, hostName) }, { parent });
    const warn = memoryWarning(z, INSTANCE_TYPES[aws.instanceType]?.memoryGiB ?? 0);
    if (warn) pulumi.log.warn(`rpcstack: host ${hostName}: ${warn}`, parent);
    return aws;
  }
  const warn = memoryWarning(z, tier.memoryGiB);
  if (warn) pulumi.log.warn(`rpcstack: host ${hostName}: ${warn} (tier ${tier.name})`, parent);
  return new SshHost(name, { ...h, privateKey: args.sshPrivateKey! }, { parent });
}

function createHost(name: string, args: RpcProviderArgs, parent: pulumi.Resource): Host {
  const { host, retainData } = args.settings;
  const z = stackSizing(args.settings);
  const tier = hostTier(args.settings.tier, host.diskGB);
  switch (host.kind) {
    case "aws": {
      const needs = { diskGB: host.diskGB, diskIops: host.diskIops, iops: z?.iops, throughputMBps: z?.throughputMBps, memoryGiB: z?.memoryGiB };
      const aws = new AwsHost(name, { ...host, tier, retainData, needs }, { parent });
      const warn = memoryWarning(z, INSTANCE_TYPES[aws.instanceType]?.memoryGiB ?? 0);
      if (warn) pulumi.log.warn(`rpcstack: ${warn}`, parent);
      return aws;
    }
    case "ssh":
    case "local": {
      const warn = memoryWarning(z, tier.memoryGiB);
      if (warn) pulumi.log.warn(`rpcstack: ${warn} (tier ${tier.name})`, parent);
      return host.kind === "ssh" ? new SshHost(name, { ...host, privateKey: args.sshPrivateKey! }, { parent }) : new LocalHost(name, {}, { parent });
    }
    case "kubernetes":
      throw new pulumi.ResourceError("RpcProvider: host kind kubernetes is deployed by KubernetesStack (components/kubernetesStack.ts)", parent);
  }
}
