import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { L2Urls, ServiceSpec, VolumeSpec } from "../services/index.js";
import { createContainers, createVolumes } from "./dockerServices.js";

export interface L2NodeArgs {
  /** The L2 node's spec (Juno or Pathfinder) and its data volume, from services/. */
  readonly service: ServiceSpec;
  readonly volumes: readonly VolumeSpec[];
  readonly urls: L2Urls;
  readonly provider: docker.Provider;
  /** The Docker network the L1 node created. */
  readonly networkName: pulumi.Input<string>;
  /** The L1 execution client the L2 node follows over WebSocket; absent for an external L1. */
  readonly l1?: pulumi.Resource;
  /** An external L1's URLs (a Pulumi secret), for the node's `secretEnvironment`. */
  readonly secrets?: pulumi.Output<Readonly<Record<string, string>>>;
  /** One line for the operator about how the node was configured (Juno's poll flag). */
  readonly notice?: string;
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
    if (args.notice) pulumi.log.info(args.notice, this);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: args.l1 ? [args.l1] : [], secrets: args.secrets };
    const volumes = createVolumes(ctx, args.volumes);
    this.volumes = volumes;
    this.container = createContainers(ctx, [args.service], volumes, { waitHealthy: [args.service.name] }).get(args.service.name)!;
    this.rpcHttpUrl = pulumi.output(args.urls.rpcHttp);
    this.rpcWsUrl = pulumi.output(args.urls.rpcWs);
    this.syncHealthUrl = pulumi.output(args.urls.syncHealth);
    this.registerOutputs({ rpcHttpUrl: this.rpcHttpUrl, rpcWsUrl: this.rpcWsUrl, syncHealthUrl: this.syncHealthUrl });
  }
}
