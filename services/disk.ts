/**
 * The disk watcher: data-volume use as metrics, and the gateway's health check for each node that
 * keeps data (503 while its volume is nearly full, else the node's own check). Pure data.
 *
 * Why not HAProxy's agent-check: its agent-addr must resolve when HAProxy parses the file (2.6.12:
 * "parsing agent-addr failed"), so the gateway could not start without the watcher.
 */
import type { StackSettings } from "../config/index.js";
import { dataVolumeMounts, dataVolumes, volumeArgs } from "./dataVolumes.js";
import type { FileSpec, ServiceSpec } from "./types.js";

/** The nodes' own live checks, by layer (services/readiness.ts syncHealthUrls). */
export interface SyncHealthUrls {
  readonly l1: string;
  readonly l2: string;
}

/** Private-network ports: Prometheus /metrics, and the TCP agent HAProxy asks. */
export const DISK_WATCH = { name: "disk-watch", port: 9105 } as const;

/** What the gateway checks for a layer whose node keeps data. */
export const diskCheckUrl = (layer: "l1" | "l2") => `http://${DISK_WATCH.name}:${DISK_WATCH.port}/check/${layer}`;

const PROGRAM = { from: "bundle", path: "/readiness/disk.js", source: "readiness/diskWatch.ts" } as const satisfies FileSpec;

/** `--check l1:geth,lighthouse=<L1 health URL>` and likewise for L2: the checks the gateway asks for. */
function checkArgs(settings: StackSettings, health: SyncHealthUrls): string[] {
  const v = dataVolumes(settings);
  return [
    ...(v.l1.length ? ["--check", `l1:${v.l1.join(",")}=${health.l1}`] : []),
    ...(v.l2.length ? ["--check", `l2:${v.l2.join(",")}=${health.l2}`] : []),
  ];
}

/** Undefined where nothing is kept on disk (devnet: both chains live in memory). */
export function diskWatch(settings: StackSettings, health: SyncHealthUrls): ServiceSpec | undefined {
  const mounts = dataVolumeMounts(settings);
  if (!mounts.length) return undefined;
  const d = settings.disk;
  return {
    name: DISK_WATCH.name,
    containerName: "rpcstack-disk-watch",
    image: settings.readiness.image,
    command: [
      "node", PROGRAM.path, ...volumeArgs("--volume", settings), ...checkArgs(settings, health),
      "--warn-percent", String(d.warnPercent), "--stop-percent", String(d.stopPercent), "--port", String(DISK_WATCH.port),
    ],
    environment: {},
    ports: [{ container: DISK_WATCH.port, protocol: "tcp", purpose: "metrics" }],
    volumes: mounts,
    files: [PROGRAM],
    healthcheck: {
      test: ["CMD", "node", "-e", `fetch("http://127.0.0.1:${DISK_WATCH.port}/metrics").then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))`],
      intervalSeconds: 30,
      timeoutSeconds: 10,
      retries: 3,
      startPeriodSeconds: 10,
    },
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
}
