import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { OperatorError } from "./operatorError.js";
import type { ServiceSpec } from "../services/index.js";
import { createContainers, type DockerTarget } from "./dockerServices.js";

export interface RolloutStepArgs extends DockerTarget {
  /** The step from services/rollout.ts: rpcstack-ready --await for the node it follows. */
  readonly service: ServiceSpec;
  /** The node's containers (and any other the step's spec names), by service name. */
  readonly known: ReadonlyMap<string, pulumi.Input<pulumi.Resource>>;
}

/**
 * One step of a rolling upgrade, run on the gateway's host (it reaches every node): a one-shot
 * container that exits 0 once the node before it is in rotation. It carries a digest of that
 * node's containers, so Pulumi replaces (and so runs) it exactly when they were replaced. The
 * next node waits for `passed`, which fails with the step's last words if it did not exit 0:
 * then `pulumi up` stops before touching the next node, which keeps serving.
 */
export class RolloutStep extends pulumi.ComponentResource {
  readonly container: docker.Container;
  /** What the next node's containers depend on: resolves to the step once it passed. */
  readonly passed: pulumi.Output<pulumi.Resource>;

  constructor(name: string, args: RolloutStepArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:RolloutStep", name, {}, opts);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, known: args.known };
    this.container = createContainers(ctx, { step: args.service }, new Map()).step;
    this.passed = pulumi.all([this.container.exitCode, this.container.containerLogs]).apply(([code, logs]) => {
      if (code !== 0) {
        const tail = (logs ?? "").trim().split("\n").slice(-3).join("\n");
        throw new OperatorError(`rpcstack: ${args.service.name}: the node before it did not come back into rotation (exit ${code}); the next node was left as it is:\n${tail}`, this);
      }
      return this.container as pulumi.Resource;
    });
    this.registerOutputs({});
  }
}
