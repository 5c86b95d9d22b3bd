import type * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";

/**
 * What every host kind gives the node and gateway components, so they do not know which kind
 * they run on.
 */
export interface Host extends pulumi.ComponentResource {
  /** Where the gateway is reached from the internet (127.0.0.1 for a local host). */
  readonly publicAddress: pulumi.Output<string>;
  /** Docker provider for the host's daemon; it waits for the host's preflight. */
  readonly dockerProvider: docker.Provider;
  /** Estimated monthly cost in USD (aws hosts only). */
  readonly monthlyCostUsd?: pulumi.Output<number>;
}
