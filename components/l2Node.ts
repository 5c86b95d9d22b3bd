import * as command from "@pulumi/command";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { RESTORE_RESULT_PREFIX, type RestoreResult } from "../volumes/restoreStatus.js";
import { RESTORE_SERVICE } from "../services/restore.js";
import type { L2Role } from "../services/index.js";
import { createContainers, createVolumes, type DockerTarget } from "./dockerServices.js";
import { lastTaggedJson } from "./taggedOutput.js";

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

const shellQuote = (s: string) => `'${s.replace(/'/g, `'"'"'`)}'`;

/** The restore's result line, parsed; undefined when it printed none (killed, or never ran). */
export const parseRestoreLogs = (logs: string | undefined) => lastTaggedJson<RestoreResult>(logs, RESTORE_RESULT_PREFIX);

/**
 * Starknet L2 node (Juno or Pathfinder), after its restore from a snapshot where `l2.snapshot` is
 * set. `pulumi up` waits until its RPC answers; a failed restore stops the update with its cause,
 * before the node starts.
 */
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
    const { restore, node } = role.services;
    if (role.restoreNotice) pulumi.log.info(role.restoreNotice, this);
    const gates = restore ? { node: (before: ReadonlyMap<string, docker.Container>) => this.restoredGate(name, before.get(RESTORE_SERVICE.name)!) } : {};
    this.container = createContainers(ctx, { ...(restore ? { restore } : {}), node }, volumes, { waitHealthy: ["node"], gates, everyUpdate: ["restore"] }).node;
    this.rpcHttpUrl = pulumi.output(role.urls.rpcHttp);
    this.rpcWsUrl = pulumi.output(role.urls.rpcWs);
    this.syncHealthUrl = pulumi.output(role.urls.syncHealth);
    this.registerOutputs({ rpcHttpUrl: this.rpcHttpUrl, rpcWsUrl: this.rpcWsUrl, syncHealthUrl: this.syncHealthUrl });
  }

  /**
   * What the node waits for: a step that passes once the restore exited 0 (its last line is said
   * in `pulumi up`'s output) and fails the update with the restore's cause otherwise.
   */
  private restoredGate(name: string, restore: docker.Container): command.local.Command {
    const verdict = pulumi.all([restore.exitCode, restore.containerLogs]).apply(([code, logs]) => {
      const result = parseRestoreLogs(logs);
      const said = (logs ?? "").trim().split("\n").filter((l) => l.startsWith("rpcstack-restore: "));
      if (code === 0 && result?.outcome !== "failed") {
        if (said.length) pulumi.log.info(said.at(-1)!, this);
        return "true";
      }
      const cause = result?.outcome === "failed" ? result.cause : `exit ${code}: ${said.slice(-3).join(" / ") || "no output"}`;
      const message = `rpcstack: restoring the L2 node's database from rpcstack:l2.snapshot failed: ${cause}. The volume was left empty and the node was not started; fix the cause and run pulumi up again.`;
      pulumi.log.error(message, this);
      return `echo ${shellQuote(message)} >&2; exit 1`;
    });
    return new command.local.Command(`${name}-restored`, { create: verdict, interpreter: ["/bin/sh", "-c"] }, { parent: this, dependsOn: [restore] });
  }
}
