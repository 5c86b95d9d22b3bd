import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { L1Endpoint, ProjectKey, StackSettings } from "../config/index.js";
import type { GatewayCompiled } from "../gateway/types.js";
import { endpointsOf, type ChainEndpoints, type Surface } from "../plan/index.js";
import type { GatewayRole } from "../services/index.js";
import { createContainers, createVolumes, type DockerTarget } from "./dockerServices.js";
import { gatewayGenerated } from "./stackSecrets.js";

export interface GatewayArgs extends DockerTarget {
  readonly settings: StackSettings;
  /** The gateway role from services/: first certificate, HAProxy, ACME client, volumes. */
  readonly role: GatewayRole;
  /** haproxy.cfg and the files it reads, compiled without keys (plan/): uploaded in the clear. */
  readonly compiled: GatewayCompiled;
  /** What is served at which URL (plan/surface.ts), for the endpoints output. */
  readonly surface: Surface;
  /** Project keys (a Pulumi secret): hashed into the key map the key sync applies, the one secret file. */
  readonly projectKeys: pulumi.Input<readonly ProjectKey[]>;
  /** The readiness step: the gateway's routes open only after it. */
  readonly readiness: pulumi.Resource;
  /** Where the gateway is reached from the internet, for the endpoint outputs. */
  readonly publicAddress: pulumi.Input<string>;
  /** An external L1's URLs (a Pulumi secret): the L1 route relays there. */
  readonly l1Endpoint?: pulumi.Input<L1Endpoint>;
  /** With badges: the public key the gateway verifies them with (PEM). */
  readonly badgePublicKey?: pulumi.Input<string>;
  /** Values of the role's `secretEnvironment` names (the badge service's signing key), as a Pulumi secret. */
  readonly secrets?: pulumi.Output<Readonly<Record<string, string>>>;
}

/**
 * The TLS gateway on 443: HAProxy (official image) with the generated configuration (in the
 * clear, so a preview shows its changes), the key sync that applies the key map (a secret) to it
 * live, so a key change replaces no HAProxy container, a certificate volume, the ACME client for public stacks (a
 * self-signed certificate on the local stack), with badges the badge service, opening after the readiness step.
 */
export class Gateway extends pulumi.ComponentResource {
  readonly endpoints: pulumi.Output<Record<string, ChainEndpoints>>;
  readonly containerName: pulumi.Output<string>;
  /** The HAProxy container. */
  readonly container: docker.Container;
  /** The key sync: once it has run, the deployed keys are live (what post-deploy relays wait for). */
  readonly keySync: docker.Container;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:Gateway", name, {}, opts);
    const s = args.settings;
    const generated = gatewayGenerated(s, args.compiled, args.projectKeys, args.l1Endpoint, args.badgePublicKey);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: [args.readiness], generated, secrets: args.secrets };
    const volumes = createVolumes(ctx, args.role.volumes);
    const containers = createContainers(ctx, args.role.services, volumes);
    this.container = containers.haproxy;
    this.keySync = containers.keySync;
    this.containerName = this.container.name;
    this.endpoints = pulumi.output(endpointsOf(args.surface));
    this.registerOutputs({ endpoints: this.endpoints, containerName: this.containerName, publicAddress: args.publicAddress });
  }
}
