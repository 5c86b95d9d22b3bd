/**
 * The disk watcher: data-volume use as metrics, and the gateway's health check for each node that
 * keeps data (503 while its volume is nearly full, else the node's own check). Pure data.
 *
 * Why not HAProxy's agent-check: its agent-addr must resolve when HAProxy parses the file (2.6.12:
 * "parsing agent-addr failed"), so the gateway could not start without the watcher.
 */
import { MAIN_HOST, type StackSettings } from "../config/index.js";
import { dataVolumeMounts, dataVolumes, volumeArgs } from "./dataVolumes.js";
import { placedNodes, servedBySeveral, type PlacedNode } from "./nodes.js";
import { SYNC_HEALTH_PORT, scrapedAs } from "./ports.js";
import { nodeHttpGet } from "./health.js";
import type { FileSpec, PortSpec, ServiceSpec } from "./types.js";

/** The nodes' own live checks, by layer (services/readiness.ts syncHealthUrls). */
export interface SyncHealthUrls {
  readonly l1: string;
  readonly l2: string;
}

/** Private-network ports: Prometheus /metrics, and the TCP agent HAProxy asks. */
export const DISK_WATCH = { name: "disk-watch", port: 9105 } as const;

/** What the gateway checks for a layer whose node keeps data. */
export const diskCheckUrl = (layer: "l1" | "l2") => `http://${DISK_WATCH.name}:${DISK_WATCH.port}/check/${layer}`;

/** Where the gateway's host reaches a host's disk watcher: by name on its own, at the private address on a further host. */
const watcherAt = (settings: Pick<StackSettings, "hosts">, host: string) => (host === MAIN_HOST ? DISK_WATCH.name : settings.hosts[host].privateAddress);

/** The gateway's check of one node of a layer served by several: its host's watcher, for the node's volumes and then its verdict. */
export const nodeCheckUrl = (settings: Pick<StackSettings, "hosts">, n: PlacedNode) => `http://${watcherAt(settings, n.slot.host)}:${DISK_WATCH.port}/check/${n.slot.layer}-${n.name}`;

/** The readiness service's verdict on one node (in rotation or not), where a watcher on `host` reaches it. */
export const nodeVerdictUrl = (settings: Pick<StackSettings, "host">, host: string, n: PlacedNode) =>
  `http://${host === MAIN_HOST ? "sync-health" : settings.host.privateAddress}:${SYNC_HEALTH_PORT}/ready/${n.slot.layer}/${n.name}`;

const PROGRAM = { from: "bundle", path: "/readiness/disk.js", source: "readiness/diskWatch.ts" } as const satisfies FileSpec;

/**
 * The checks the gateway asks for: `--check l1:geth,lighthouse=<L1 health URL>` for a layer's only
 * node, and one per node (`--check l1-geth-2:geth-2,lighthouse-2=<its verdict>`) where the layer
 * has several; only for the nodes on `host`.
 */
function checkArgs(settings: StackSettings, health: SyncHealthUrls, host: string): string[] {
  const v = dataVolumes(settings, host);
  const nodes = placedNodes(settings);
  return (["l1", "l2"] as const).flatMap((layer) => {
    if (!servedBySeveral(settings, layer)) return v[layer].length ? ["--check", `${layer}:${v[layer].join(",")}=${health[layer]}`] : [];
    return nodes[layer]
      .filter((n) => n.slot.host === host && n.dataVolumes.length)
      .flatMap((n) => ["--check", `${layer}-${n.name}:${n.dataVolumes.map((d) => d.key).join(",")}=${nodeVerdictUrl(settings, host, n)}`]);
  });
}

/** A further host's watcher is reached by the gateway's host on its private address. */
const watcherPort = (settings: Pick<StackSettings, "hosts">, host: string): PortSpec =>
  host === MAIN_HOST
    ? { container: DISK_WATCH.port, protocol: "tcp", purpose: "metrics", metrics: scrapedAs("disk") }
    : { container: DISK_WATCH.port, protocol: "tcp", purpose: "health", publish: { address: settings.hosts[host].privateAddress, port: DISK_WATCH.port } };

/** The disk watcher of one host (the stack's own unless named); undefined where nothing is kept on disk (devnet: both chains live in memory). */
export function diskWatch(settings: StackSettings, health: SyncHealthUrls, host = MAIN_HOST): ServiceSpec | undefined {
  const mounts = dataVolumeMounts(settings, host);
  if (!mounts.length) return undefined;
  const d = settings.disk;
  return {
    name: DISK_WATCH.name,
    containerName: "rpcstack-disk-watch",
    image: settings.readiness.image,
    command: [
      "node", PROGRAM.path, ...volumeArgs("--volume", settings, host), ...checkArgs(settings, health, host),
      "--warn-percent", String(d.warnPercent), "--stop-percent", String(d.stopPercent), "--port", String(DISK_WATCH.port),
    ],
    environment: {},
    ports: [watcherPort(settings, host)],
    volumes: mounts,
    files: [PROGRAM],
    healthcheck: nodeHttpGet(DISK_WATCH.port, "/metrics", 10),
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
}
