/** Starknet L2 (Juno or Pathfinder) and the indexer that follows it. */
import type { StackSettings } from "../config/index.js";
import { bashHttpGet, curlJsonRpc } from "./health.js";
import { l1Urls } from "./l1.js";
import { PORTS } from "./ports.js";
import type { ServiceGroup, ServiceSpec, VolumeSpec } from "./types.js";

const P = PORTS;

export interface L2Urls {
  /** JSON-RPC over HTTP, in-network. */
  readonly rpcHttp: string;
  readonly rpcWs: string;
  /** 200 only while the node is within the sync tolerance: what the gateway checks. */
  readonly syncHealth: string;
}

export function l2Urls(config: StackSettings): L2Urls {
  return config.l2.client === "juno"
    ? { rpcHttp: `http://juno:${P.juno.http}`, rpcWs: `ws://juno:${P.juno.ws}`, syncHealth: `http://juno:${P.juno.http}/ready/sync` }
    : {
        rpcHttp: `http://pathfinder:${P.pathfinder.rpc}/rpc/v0_9`,
        rpcWs: `ws://pathfinder:${P.pathfinder.rpc}/ws`,
        syncHealth: `http://pathfinder:${P.pathfinder.monitor}/ready/synced`,
      };
}

export function l2Volumes(config: StackSettings): VolumeSpec[] {
  const net = config.network.l2.junoNetwork;
  const client = config.l2.client;
  return [{ key: client, name: `rpcstack-${net}-${client}`, purpose: `${client} chain data`, retain: config.retainData }];
}

const JUNO_FIRST_START_SECONDS = 900;

function juno(config: StackSettings): ServiceSpec {
  // Config resolution decided the flag from the release; a settings value without one is a bug.
  const pollFlag = config.l2.pollFlag;
  if (!pollFlag) throw new Error(`rpcstack:l2.image: no poll-interval flag resolved for Juno ${config.l2.release}`);
  return {
    name: "juno",
    containerName: "rpcstack-juno",
    image: config.l2.image,
    command: [
      "--http",
      `--http-port=${P.juno.http}`,
      "--http-host=0.0.0.0",
      "--ws",
      `--ws-port=${P.juno.ws}`,
      "--ws-host=0.0.0.0",
      "--metrics",
      `--metrics-port=${P.juno.metrics}`,
      "--metrics-host=0.0.0.0",
      "--db-path=/var/lib/juno",
      `--network=${config.network.l2.junoNetwork}`,
      `--eth-node=${l1Urls().rpcWs}`,
      pollFlag,
      config.l2.pendingPollInterval,
    ],
    environment: {},
    ports: [
      { container: P.juno.http, protocol: "tcp", purpose: "rpc", publish: { address: "127.0.0.1", port: P.juno.http } },
      { container: P.juno.ws, protocol: "tcp", purpose: "ws" },
      { container: P.juno.metrics, protocol: "tcp", purpose: "metrics" },
    ],
    volumes: [{ volume: "juno", path: "/var/lib/juno" }],
    files: [],
    // Juno v0.17 migrates its database for ~8 minutes on its first start; failures then do not count.
    healthcheck: curlJsonRpc(P.juno.http, "starknet_chainId", JUNO_FIRST_START_SECONDS),
    restart: "unless-stopped",
    stopGraceSeconds: 120,
    dependsOn: [],
  };
}

function pathfinder(config: StackSettings): ServiceSpec {
  return {
    name: "pathfinder",
    containerName: "rpcstack-pathfinder",
    image: config.l2.image,
    command: [],
    environment: {
      RUST_LOG: "info",
      PATHFINDER_NETWORK: config.network.l2.pathfinderNetwork,
      PATHFINDER_ETHEREUM_API_URL: l1Urls().rpcWs,
      PATHFINDER_HTTP_RPC_ADDRESS: `0.0.0.0:${P.pathfinder.rpc}`,
      PATHFINDER_WEBSOCKET_ENABLED: "true",
      PATHFINDER_MONITOR_ADDRESS: `0.0.0.0:${P.pathfinder.monitor}`,
      PATHFINDER_DATA_DIRECTORY: "/usr/share/pathfinder/data",
    },
    ports: [
      { container: P.pathfinder.rpc, protocol: "tcp", purpose: "rpc", publish: { address: "127.0.0.1", port: P.pathfinder.rpc } },
      { container: P.pathfinder.monitor, protocol: "tcp", purpose: "health" },
    ],
    volumes: [{ volume: "pathfinder", path: "/usr/share/pathfinder/data" }],
    files: [],
    // /ready: started and serving (not necessarily synced; the gateway checks /ready/synced).
    healthcheck: bashHttpGet(P.pathfinder.monitor, "/ready", [200], 120),
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 120,
    dependsOn: [],
  };
}

export function l2Node(config: StackSettings): ServiceSpec {
  return config.l2.client === "juno" ? juno(config) : pathfinder(config);
}

export function indexer(config: StackSettings): ServiceSpec {
  const node = l2Node(config);
  return {
    name: "indexer",
    containerName: "rpcstack-indexer",
    image: config.indexer.image,
    command: [...config.indexer.command],
    environment: { L2_RPC_URL: l2Urls(config).rpcHttp, INDEXER_POLL_SECONDS: "10" },
    ports: [],
    volumes: [],
    files: [
      { path: "/indexer/indexer.sh", source: "indexer/indexer.sh", executable: true },
      { path: "/indexer/indexer.mjs", source: "indexer/indexer.mjs" },
    ],
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 10,
    dependsOn: [{ service: node.name, condition: "service_healthy" }],
  };
}

/** dc-l2.yaml's worth: the L2 node, and the indexer when enabled. */
export function l2Services(config: StackSettings): ServiceGroup {
  const node = l2Node(config);
  return {
    services: config.indexer.enabled ? [node, indexer(config)] : [node],
    volumes: l2Volumes(config),
  };
}
