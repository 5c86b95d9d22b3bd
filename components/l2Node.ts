import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { L2Role } from "../services/index.js";
import { createContainers, createVolumes, type DockerTarget } from "./dockerServices.js";

export interface L2NodeArgs extends DockerTarget {
  /** The L2 role from services/: the node (its indexer is a component of its own), volumes, URLs, notice. */
  readonly role: L2Role;
  /** The L1 execution client the L2 node follows over WebSocket; absent for an external L1. */
  readonly l1?: pulumi.Resource;
  /** An external L1's URLs (a Pulumi secret), for the node's `secretEnvironment`. */
  readonly secrets?: pulumi.Output<Readonly<Record<string, string>>>;
  /** Other nodes' rollout steps this node's specs name (services/rollout.ts). */
  readonly known?: ReadonlyMap<string, pulumi.Input<pulumi.Resource>>;
  /** What every resource of this node waits for: the previous node's rollout step, once it passed. */
  readonly after?: pulumi.Input<pulumi.Resource>[];
}

/** Starknet L2 node (Juno or Pathfinder). `pulumi up` waits until its RPC answers. */
export class L2Node extends pulumi.ComponentResource {
  readonly rpcHttpUrl: pulumi.Output<string>;
  readonly rpcWsUrl: pulumi.Output<string>;
  /** 200 only while within the sync tolerance: the gateway's health check target. */
  readonly syncHealthUrl: pulumi.Output<string>;
  readonly container: docker.Container;
  /** The node's data volume by spec key: the disk watcher mounts it read-only. */
  readonly volumes: ReadonlyMap<string, docker.Volume>;

  constructor(name: string, args: L2NodeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:L2Node", name, {}, opts);
    const { role } = args;
    // One line for the operator about how the node was configured (Juno's poll flag).
    if (role.notice) pulumi.log.info(role.notice, this);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: [...(args.l1 ? [args.l1] : []), ...(args.after ?? [])], secrets: args.secrets, known: args.known };
    const volumes = createVolumes(ctx, role.volumes);
    this.volumes = volumes;
    this.container = createContainers(ctx, { node: role.services.node }, volumes, { waitHealthy: ["node"] }).node;
    this.rpcHttpUrl = pulumi.output(role.urls.rpcHttp);
    this.rpcWsUrl = pulumi.output(role.urls.rpcWs);
    this.syncHealthUrl = pulumi.output(role.urls.syncHealth);
    this.registerOutputs({ rpcHttpUrl: this.rpcHttpUrl, rpcWsUrl: this.rpcWsUrl, syncHealthUrl: this.syncHealthUrl });
  }
}
