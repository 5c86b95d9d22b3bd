/** The readiness program's containers: a one-shot sync check and the live health endpoint. */
import { LAYERS, spansHosts, type StackSettings } from "../config/index.js";
import { l1Urls } from "./l1.js";
import { l2Urls } from "./l2.js";
import { placedNodes, servedBySeveral } from "./nodes.js";
import { SYNC_HEALTH_PORT, scrapedAs } from "./ports.js";
import { dataVolumeMounts, externalDataVolumes, volumeArgs } from "./dataVolumes.js";
import { diskWatch, type SyncHealthUrls } from "./disk.js";
import type { FileSpec, HealthCheckSpec, Role, ServiceSpec } from "./types.js";

export { SYNC_HEALTH_PORT };

export const READINESS_PROGRAM: Extract<FileSpec, { from: "bundle" }> = { from: "bundle", path: "/readiness/ready.js", source: "readiness/cli.ts" };
const PROGRAM = READINESS_PROGRAM;

/** In-network URLs of the live checks the gateway uses to keep traffic off a lagging node. */
export function syncHealthUrls(settings: Pick<StackSettings, "hosts" | "l2">): SyncHealthUrls {
  return {
    l1: `http://sync-health:${SYNC_HEALTH_PORT}/ready/l1`,
    l2: l2Urls(settings).syncHealth,
  };
}

/**
 * Each node to poll: a layer's only node as it always was (`--l1 URL`), several by name
 * (`--l1 geth-2=URL`, where the gateway's host reaches them), so checks and metrics can name them.
 */
export function targetArgs(settings: StackSettings, layers: readonly ("l1" | "l2")[] = LAYERS): string[] {
  const nodes = placedNodes(settings);
  const l2 = l2Urls(settings);
  const l1Args = settings.l1.external
    ? // An external L1's URL is a secret: the program reads it from its environment.
      ["--l1-from-env", "RPCSTACK_L1_URL"]
    : servedBySeveral(settings, "l1")
      ? nodes.l1.flatMap((n) => ["--l1", `${n.name}=${n.rpcHttp}`])
      : ["--l1", l1Urls().rpcHttp];
  const l2Args = servedBySeveral(settings, "l2")
    ? nodes.l2.flatMap((n) => ["--l2", `${n.name}=${n.rpcHttp}`, ...(n.nodeReady ? ["--l2-ready", `${n.name}=${n.nodeReady}`] : [])])
    : // The node's own readiness, when it has one (Starknet Devnet has none: its head decides).
      ["--l2", l2.rpcHttp, ...(l2.nodeReady ? ["--l2-ready", l2.nodeReady] : [])];
  return [...(layers.includes("l1") ? l1Args : []), ...(layers.includes("l2") ? l2Args : [])];
}

/** The rules every check applies to the nodes of `layers`: tolerance, reference, and, with several nodes, the chain each must be on. */
export function ruleArgs(settings: StackSettings, layers: readonly ("l1" | "l2")[] = LAYERS): string[] {
  const r = settings.readiness;
  const several = LAYERS.some((l) => servedBySeveral(settings, l));
  return [
    ...targetArgs(settings, layers),
    "--tolerance-blocks", String(r.toleranceBlocks),
    ...(r.l1ReferenceUrl && layers.includes("l1") ? ["--l1-reference", r.l1ReferenceUrl] : []),
    ...(several && layers.includes("l1") ? ["--l1-chain-id", `0x${settings.network.l1.chainId.toString(16)}`] : []),
    ...(several && layers.includes("l2") ? ["--l2-chain-id", settings.network.l2.chainId] : []),
  ];
}

/** What the readiness containers take as secrets (an external L1's URL). */
const secretsFor = (settings: Pick<StackSettings, "l1">) =>
  settings.l1.external ? { secretEnvironment: { RPCSTACK_L1_URL: "RPCSTACK_L1_HTTP_URL" as const } } : {};

const base = {
  environment: {},
  ports: [],
  volumes: [],
  files: [PROGRAM],
  user: "1000:1000",
  stopGraceSeconds: 10,
  dependsOn: [],
};

/**
 * Runs once per `pulumi up`: waits for sync (readiness.wait) or reports the state and exits.
 * `disk`: it also reports how full each data volume is, mounting them (a Docker host's volumes).
 */
export function syncCheck(settings: StackSettings, disk = true): ServiceSpec {
  const r = settings.readiness;
  const mounts = disk ? dataVolumeMounts(settings) : [];
  return {
    ...base,
    ...secretsFor(settings),
    image: settings.readiness.image,
    name: "sync-check",
    containerName: "rpcstack-sync-check",
    // Reports how full each data volume is, with a warning above disk.warnPercent that names disk.stopPercent.
    volumes: mounts,
    command: [
      "node", PROGRAM.path, ...ruleArgs(settings),
      ...(disk ? volumeArgs("--disk", settings) : []), ...(mounts.length ? ["--disk-warn-percent", String(settings.disk.warnPercent), "--disk-stop-percent", String(settings.disk.stopPercent)] : []),
      ...(r.wait ? ["--timeout-minutes", String(r.timeoutMinutes), "--interval-seconds", "15"] : ["--report-only"]),
    ],
    // The gateway opens after this check; its agent-check needs the watcher to exist by then.
    dependsOn: mounts.length ? [{ service: "disk-watch", condition: "service_started" as const }] : [],
    restart: "no",
  };
}

// Healthy while it answers at all: 503 (behind) is the answer the gateway acts on.
const serving: HealthCheckSpec = {
  test: ["CMD", "node", "-e", `fetch("http://127.0.0.1:${SYNC_HEALTH_PORT}/ready").then(r => process.exit(r.status === 200 || r.status === 503 ? 0 : 1), () => process.exit(1))`],
  intervalSeconds: 30,
  timeoutSeconds: 10,
  retries: 3,
  startPeriodSeconds: 20,
};

/**
 * How often sync-health polls each node: every 15 s for a layer's only node (the gateway asks the
 * node's own check at each of its checks), every second where a layer has several, so a node that
 * falls behind or stops answering leaves rotation within a check or two of the gateway's.
 */
export const rotationPollSeconds = (settings: Pick<StackSettings, "nodes">) => (LAYERS.some((l) => servedBySeveral(settings, l)) ? 1 : 15);

/**
 * Long-running: serves /ready/l1 and /ready/l2 (200 synced, 503 behind), per node where a layer
 * has several, and /metrics, on the private network; published on the stack's host's private
 * address once nodes run on further hosts (their disk watchers ask it).
 */
export function syncHealth(settings: StackSettings): ServiceSpec {
  const chains = settings.network.chains;
  const relayed: readonly ("l1" | "l2")[] = settings.l1.external ? ["l2"] : ["l1", "l2"];
  return {
    ...base,
    ...secretsFor(settings),
    image: settings.readiness.image,
    name: "sync-health",
    containerName: "rpcstack-sync-health",
    command: [
      "node", PROGRAM.path, ...ruleArgs(settings), "--serve", String(SYNC_HEALTH_PORT), "--interval-seconds", String(rotationPollSeconds(settings)),
      ...relayed.flatMap((l) => ["--chain-name", `${l}=${chains[l].path}`]),
    ],
    ports: [
      {
        container: SYNC_HEALTH_PORT,
        protocol: "tcp",
        purpose: "health",
        // Its gauges carry layer, node and chain themselves.
        metrics: scrapedAs("rotation"),
        ...(spansHosts(settings) ? { publish: { address: settings.host.privateAddress!, port: SYNC_HEALTH_PORT } } : {}),
      },
    ],
    healthcheck: serving,
    restart: "unless-stopped",
  };
}

/** The readiness containers by role: the disk watcher (where chain data is kept), the one-shot check and the live health. */
export type ReadinessRole = Role<{ readonly diskWatch?: ServiceSpec; readonly check: ServiceSpec; readonly health: ServiceSpec }> & {
  readonly healthUrls: ReturnType<typeof syncHealthUrls>;
};

export function readinessRole(settings: StackSettings): ReadinessRole {
  const healthUrls = syncHealthUrls(settings);
  return {
    // On a cluster the check is a Job's pod, which cannot mount the nodes' claims (ReadWriteOnce, on
    // other machines); the kubelet reports their use there.
    services: { diskWatch: diskWatch(settings, healthUrls), check: syncCheck(settings, settings.host.kind !== "kubernetes"), health: syncHealth(settings) },
    // The nodes' volumes, only mounted read-only here (compose: declared by the L1 and L2 files).
    volumes: externalDataVolumes(settings),
    healthUrls,
  };
}
