/**
 * The usage keeper's container (usage/): it reads the gateway's usage table through HAProxy's
 * runtime API every few seconds and keeps the counts per day on a volume. Pure data.
 */
import type { StackSettings } from "../config/index.js";
import { nodeHttpGet } from "./health.js";
import type { ServiceSpec, VolumeSpec } from "./types.js";

export const USAGE_PORT = 9107;
const DATA_DIR = "/var/lib/rpcstack-usage";
const PROGRAM = { from: "bundle", path: "/usage/keeper.js", source: "usage/cli.ts" } as const;

/** Counted usage is what a provider bills from: kept like chain data. */
export const usageVolume = (settings: StackSettings): VolumeSpec => ({
  key: "usage", name: "rpcstack-gateway-usage", purpose: "usage per project key and day, as the usage keeper counted it", retain: settings.retainData,
});

/**
 * `adminPort`: the runtime API on HAProxy's loopback; the keeper shares HAProxy's network
 * namespace (networkOf), so it reaches that port and nothing else is opened for it.
 */
export function usageService(settings: StackSettings, adminPort: number): ServiceSpec {
  return {
    name: "usage",
    containerName: "rpcstack-usage",
    // The readiness image: Node.js, nothing else needed.
    image: settings.readiness.image,
    command: ["node", PROGRAM.path, "--admin", `127.0.0.1:${adminPort}`, "--file", `${DATA_DIR}/usage.json`, "--listen", `0.0.0.0:${USAGE_PORT}`],
    environment: {},
    // Scraped through HAProxy's container, whose network namespace it shares.
    ports: [{ container: USAGE_PORT, protocol: "tcp", purpose: "metrics" }],
    volumes: [{ volume: "usage", path: DATA_DIR }],
    files: [PROGRAM],
    healthcheck: nodeHttpGet(USAGE_PORT, "/healthz", 10),
    restart: "unless-stopped",
    // A new named volume belongs to root: the keeper writes there.
    user: "root",
    // Its last reading is taken and saved on SIGTERM.
    stopGraceSeconds: 30,
    dependsOn: [{ service: "haproxy", condition: "service_started" }],
    networkOf: "haproxy",
  };
}
