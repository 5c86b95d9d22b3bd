import * as pulumi from "@pulumi/pulumi";
import type { MonitoringPlan } from "../plan/index.js";
import { createContainers, createVolumes, type DockerTarget } from "./dockerServices.js";

export interface MonitoringArgs extends DockerTarget {
  readonly plan: MonitoringPlan;
  /** Prometheus starts once what it scrapes exists (the gateway's container). */
  readonly after: pulumi.Input<pulumi.Resource>[];
}

/**
 * Prometheus (official image) on the stack's private network with the generated configuration
 * and alert rules (no secret in either), and Grafana where an image is named; their ports on the
 * host's loopback only: the operator reaches them through an SSH tunnel (docs/monitoring.md).
 */
export class Monitoring extends pulumi.ComponentResource {
  readonly containerName: pulumi.Output<string>;

  constructor(name: string, args: MonitoringArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:Monitoring", name, {}, opts);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: args.after, generated: { monitoring: args.plan.files, grafana: args.plan.grafanaFiles } };
    const volumes = createVolumes(ctx, args.plan.role.volumes);
    this.containerName = createContainers(ctx, args.plan.role.services, volumes).prometheus.name;
    this.registerOutputs({ containerName: this.containerName });
  }
}
