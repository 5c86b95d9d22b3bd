import * as pulumi from "@pulumi/pulumi";
import type { RpcStackConfig } from "../config/index.js";

export interface RpcProviderArgs {
  /** The validated stack configuration (config/). Secret fields are read only through `secrets`. */
  readonly config: RpcStackConfig;
}

/** Everything one RPC provider runs: host, L1 and L2 nodes, indexer, readiness gate and gateway. */
export class RpcProvider extends pulumi.ComponentResource {
  readonly network: pulumi.Output<string>;
  readonly tier: pulumi.Output<string>;

  constructor(name: string, args: RpcProviderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:RpcProvider", name, {}, opts);
    this.network = pulumi.output(args.config.network.name);
    this.tier = pulumi.output(args.config.tier.name);
    this.registerOutputs({ network: this.network, tier: this.tier });
  }
}
