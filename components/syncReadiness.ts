import type * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { OperatorError } from "./operatorError.js";
import type { StackSettings } from "../config/index.js";
import { RESULT_PREFIX } from "../readiness/result.js";
import type { NodeState } from "../readiness/syncState.js";
import type { ReadinessRole } from "../services/index.js";
import { createContainers, type DockerTarget } from "./dockerServices.js";
import { lastTaggedJson } from "./taggedOutput.js";

export interface SyncReadinessArgs extends DockerTarget {
  readonly settings: StackSettings;
  /** The readiness role from services/: the disk watcher, the one-shot check, the live health endpoint, its URLs. */
  readonly role: ReadinessRole;
  /** The node containers the check waits for: a replaced one makes the check run again. */
  readonly nodes: docker.Container[];
  /** The nodes' data volumes by spec key: the disk watcher and the check mount them read-only. */
  readonly volumes?: ReadonlyMap<string, docker.Volume>;
  /** An external L1's URLs (a Pulumi secret): the checks reach L1 through them. */
  readonly secrets?: pulumi.Output<Readonly<Record<string, string>>>;
}

export interface ReadinessResult {
  readonly synced: boolean;
  readonly l1?: NodeState;
  readonly l2?: NodeState;
}

/** The final line the readiness program prints, parsed; undefined when there is none. */
export const parseReadinessLogs = (logs: string | undefined) => lastTaggedJson<ReadinessResult>(logs, RESULT_PREFIX);

/**
 * Runs the readiness program in a short-lived container on the nodes' private network (no RPC
 * port is published for it), after the node containers. With readiness.wait it blocks
 * `pulumi up` until both nodes are synced or the timeout passes, and fails the update on a
 * timeout; otherwise it reports. It also starts the long-running health endpoint the gateway
 * checks so that a node that falls behind stops receiving traffic.
 */
export class SyncReadiness extends pulumi.ComponentResource {
  /** Final state of each node as the check saw it. */
  readonly l1State: pulumi.Output<NodeState | undefined>;
  readonly l2State: pulumi.Output<NodeState | undefined>;
  readonly synced: pulumi.Output<boolean>;
  /** Live checks for the gateway: 200 while synced, 503 while behind. */
  readonly healthUrls: pulumi.Output<{ l1: string; l2: string }>;
  /** What the gateway's routes depend on. */
  readonly gate: pulumi.Resource;

  constructor(name: string, args: SyncReadinessArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:SyncReadiness", name, {}, opts);
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: args.nodes, secrets: args.secrets };
    // The disk watcher (first in the role) mounts the nodes' volumes read-only, as does the check.
    // A one-shot check runs when its container is created: a node replaced by an update (a new
    // image, a changed flag) replaces the check too, so every such update waits for sync again.
    const check = createContainers(ctx, args.role.services, args.volumes ?? new Map(), { replaceWhen: { check: args.nodes.map((n) => n.id) } }).check;
    const wait = args.settings.readiness.wait;

    const result = pulumi.all([check.exitCode, check.containerLogs]).apply(([code, logs]) => {
      const parsed = parseReadinessLogs(logs);
      if (wait && code !== 0) {
        // Fails `pulumi up` with the program's own last words (timeout or unreachable node).
        const tail = (logs ?? "").trim().split("\n").slice(-3).join("\n");
        throw new OperatorError(`rpcstack: the nodes were not synced within rpcstack:readiness.timeoutMinutes (exit ${code}):\n${tail}`, this);
      }
      return parsed ?? { synced: false };
    });
    this.l1State = result.apply((r) => r.l1);
    this.l2State = result.apply((r) => r.l2);
    this.synced = result.apply((r) => r.synced);
    this.healthUrls = pulumi.output(args.role.healthUrls);
    this.gate = check;
    this.registerOutputs({ l1State: this.l1State, l2State: this.l2State, synced: this.synced, healthUrls: this.healthUrls });
  }
}
