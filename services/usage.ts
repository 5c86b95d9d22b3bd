/**
 * The usage keeper's container (usage/): it reads the gateway's usage table through HAProxy's
 * runtime API every few seconds and keeps the counts per day on a volume. Pure data.
 */
import type { StackSettings } from "../config/index.js";
import { nodeHttpGet } from "./health.js";
import { scrapedAs } from "./ports.js";
import type { ServiceSpec, VolumeSpec } from "./types.js";

export const USAGE_PORT = 9107;
/**
 * The keeper's port as HAProxy's container publishes it: on the host's loopback, for `npm run
 * usage -- --url http://127.0.0.1:9107` there (an SSH tunnel from elsewhere), and for Prometheus.
 */
export const usagePort = { container: USAGE_PORT, protocol: "tcp", purpose: "metrics", publish: { address: "127.0.0.1", port: USAGE_PORT }, metrics: scrapedAs("usage") } as const;
const DATA_DIR = "/var/lib/rpcstack-usage";
/** The user the keeper runs as once its volume is its own (the image's `node`, as the badge service). */
export const KEEPER_USER = "1000:1000";
const PROGRAM = { from: "bundle", path: "/usage/keeper.js", source: "usage/keeperMain.ts" } as const;

/** Counted usage is what a provider bills from: kept like chain data (a ledger of a year of 10,000 keys is well under 1 GB). */
export const usageVolume = (retain: boolean): VolumeSpec => ({
  key: "usage", name: "rpcstack-gateway-usage", purpose: "usage per project key and day, as the usage keeper counted it", retain, sizeGB: 1,
});

/** The counter store replicas share (host kind kubernetes): its Service name and Redis's port. */
export const COUNTER_STORE = { name: "counters", port: 6379 } as const;
/** How often a keeper with a counter store reads and exchanges: the lag of a replica's view of the others (docs/accounts.md). */
export const SHARED_INTERVAL_SECONDS = 1;

/**
 * The counter store: Redis's protocol, nothing written to disk. What it holds is each replica's
 * ledger's counts, published again at every reading: a restarted store is whole again within a
 * second, but for replicas that are gone (docs/accounts.md).
 */
export function counterStoreService(image: string): ServiceSpec {
  return {
    name: COUNTER_STORE.name,
    containerName: "rpcstack-counters",
    image,
    // Reached from the stack's own pods only (the NetworkPolicy), so without a password; protected
    // mode would refuse every connection that is not from loopback.
    command: ["valkey-server", "--port", String(COUNTER_STORE.port), "--save", "", "--appendonly", "no", "--protected-mode", "no"],
    environment: {},
    ports: [{ container: COUNTER_STORE.port, protocol: "tcp", purpose: "api" }],
    volumes: [],
    files: [],
    healthcheck: { test: ["CMD", "valkey-cli", "-p", String(COUNTER_STORE.port), "ping"], intervalSeconds: 10, timeoutSeconds: 3, retries: 3, startPeriodSeconds: 5 },
    restart: "unless-stopped",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
}

/**
 * `adminPort`: the runtime API on HAProxy's loopback; the keeper shares HAProxy's network
 * namespace (networkOf), so it reaches that port and nothing else is opened for it.
 */
/**
 * `image`: one with Node.js. `quotaUsedMap`: HAProxy's quota_used.map, which the keeper seeds from
 * the ledger after a restart of HAProxy. `shared`: where replicas share quotas and rates, the
 * counter store's URL and HAProxy's rate_others.map.
 */
/**
 * Whether the gateway's replicas count quotas and per-key rates together in the counter store: on
 * a cluster (several replicas), not on a Docker host (one HAProxy, its embedded counters). The one
 * place this is decided; the keeper's --store and the compiled rate rule both read it.
 */
export const countersShared = (settings: Pick<StackSettings, "host">): boolean => settings.host.kind === "kubernetes";

/**
 * On a cluster, how long a gateway replica that is being stopped goes on serving before it closes its
 * listeners: long enough for the Service's endpoints and kube-proxy's rules to leave it out.
 */
export const LEAVE_ROTATION_SECONDS = 5;

export function usageService(image: string, adminPort: number, quotaUsedMap: string, shared?: { readonly store: string; readonly rateOthersMap: string }): ServiceSpec {
  return {
    name: "usage",
    containerName: "rpcstack-usage",
    image,
    // Past 10 s (two readings) without HAProxy it exits and is restarted (restart below) into the
    // network namespace of HAProxy's restarted container: a running container keeps the one it
    // joined, where nothing answers any more.
    command: ["node", PROGRAM.path, "--admin", `127.0.0.1:${adminPort}`, "--file", `${DATA_DIR}/usage.json`, "--listen", `0.0.0.0:${USAGE_PORT}`, "--give-up-seconds", "10", "--quota-used-map", quotaUsedMap, "--run-as", KEEPER_USER,
      ...(shared ? ["--store", shared.store, "--rate-others-map", shared.rateOthersMap, "--interval-seconds", String(SHARED_INTERVAL_SECONDS)] : [])],
    environment: {},
    // On HAProxy's address, whose network namespace it shares: HAProxy's container publishes it.
    ports: [],
    volumes: [{ volume: "usage", path: DATA_DIR }],
    files: [PROGRAM],
    healthcheck: nodeHttpGet(USAGE_PORT, "/healthz", 10),
    restart: "unless-stopped",
    // Started as root only to hand its volume (root-owned when Docker creates it, and ledgers kept
    // by keepers that ran as root) to KEEPER_USER; it then runs as that user (--run-as).
    user: "root",
    // Its last reading is taken and saved on SIGTERM: on a cluster, after HAProxy has left the
    // Service's rotation and begun its soft stop, so the calls it served meanwhile are counted.
    stopGraceSeconds: 30,
    preStop: ["sleep", String(LEAVE_ROTATION_SECONDS + 2)],
    dependsOn: [{ service: "haproxy", condition: "service_started" }],
    networkOf: "haproxy",
  };
}
