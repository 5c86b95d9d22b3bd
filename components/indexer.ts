import * as pulumi from "@pulumi/pulumi";
import type { ServiceSpec } from "../services/index.js";
import { createContainers, type DockerTarget } from "./dockerServices.js";

export interface IndexerArgs extends DockerTarget {
  /** The indexer's spec from services/. */
  readonly service: ServiceSpec;
  /** The L2 node it reads from; the indexer starts once that node answers. */
  readonly l2: pulumi.Resource;
}

/** The indexer: the guide's `/indexer/indexer.sh`, following the L2 node. */
export class Indexer extends pulumi.ComponentResource {
  readonly containerName: pulumi.Output<string>;

  constructor(name: string, args: IndexerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:Indexer", name, {}, opts);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: [args.l2] };
    // The L2 dependency lives in another component; within this one the indexer stands alone.
    const service = { ...args.service, dependsOn: [] };
    const container = createContainers(ctx, { indexer: service }, new Map()).indexer;
    this.containerName = container.name;
    this.registerOutputs({ containerName: this.containerName });
  }
}
