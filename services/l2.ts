/** Starknet L2 (Juno or Pathfinder) and the indexer that follows it. */
import { describeJunoPoll, l1SlotFor, type L2Settings, type NodeSlot, type StackSettings } from "../config/index.js";
import { chainData } from "./chainData.js";
import { bashHttpGet, curlJsonRpc, wgetJsonRpc } from "./health.js";
import { l1Urls } from "./l1.js";
import { PORTS, SYNC_HEALTH_PORT, scrapedAs } from "./ports.js";
import { FIRST, named, privatePort, reach, rpcPort } from "./slots.js";
import { l2Restore, RESTORE_SERVICE } from "./restore.js";
import type { Role, ServiceSpec, VolumeSpec } from "./types.js";

const P = PORTS;

export interface L2Urls {
  /** JSON-RPC over HTTP, in-network. */
  readonly rpcHttp: string;
  readonly rpcWs: string;
  /** 200 only while the node is within the sync tolerance, on its own host's network: what the gateway checks of a single node. */
  readonly syncHealth: string;
  /** The node's own readiness endpoint where the gateway's host reaches it, when it has one (the readiness program's --l2-ready). */
  readonly nodeReady?: string;
}

/**
 * The node's URLs: RPC and WebSocket where the gateway's host reaches them (by service name on its
 * own host, by private address on a further one), health on the node's own host's network.
 */
export function l2Urls(settings: Pick<StackSettings, "hosts" | "l2">, slot: NodeSlot = FIRST.l2): L2Urls {
  const at = (service: string, port: number) => reach(settings, slot, named(service, slot), port);
  // Every URL serves the stack's pinned spec version (config resolution checked the release has it).
  const spec = settings.l2.specVersions[settings.l2.rpcVersion];
  switch (settings.l2.client) {
    case "juno": {
      const ready = "/ready/sync";
      return {
        rpcHttp: `http://${at("juno", P.juno.http)}${spec.http}`,
        rpcWs: `ws://${at("juno", P.juno.ws)}${spec.ws}`,
        syncHealth: `http://${named("juno", slot)}:${P.juno.http}${ready}`,
        nodeReady: `http://${at("juno", P.juno.http)}${ready}`,
      };
    }
    case "pathfinder": {
      const ready = "/ready/synced";
      return {
        rpcHttp: `http://${at("pathfinder", P.pathfinder.rpc)}${spec.http}`,
        rpcWs: `ws://${at("pathfinder", P.pathfinder.rpc)}${spec.ws}`,
        syncHealth: `http://${named("pathfinder", slot)}:${P.pathfinder.monitor}${ready}`,
        nodeReady: `http://${at("pathfinder", P.pathfinder.monitor)}${ready}`,
      };
    }
    case "starknet-devnet":
      // Devnet answers /is_alive but has no readiness of its own: the readiness program's live
      // check (a non-zero, recent head) gates the gateway instead.
      return {
        rpcHttp: `http://starknet-devnet:${P.starknetDevnet.rpc}${spec.http}`,
        rpcWs: `ws://starknet-devnet:${P.starknetDevnet.rpc}${spec.ws}`,
        syncHealth: `http://sync-health:${SYNC_HEALTH_PORT}/ready/l2`,
      };
  }
}

export function l2Volumes(settings: StackSettings, slot: NodeSlot = FIRST.l2): VolumeSpec[] {
  const client = settings.l2.client;
  // Starknet Devnet keeps its chain in memory: nothing to keep on disk.
  if (client === "starknet-devnet") return [];
  const net = settings.network.l2.junoNetwork;
  return [{ key: named(client, slot), name: `rpcstack-${net}-${named(client, slot)}`, purpose: `${client} chain data`, retain: settings.retainData, ...chainData(settings, client, slot) }];
}

const JUNO_FIRST_START_SECONDS = 900;

// Config lets Juno and Pathfinder run only on networks that name theirs; anything else is a bug.
function required<T>(value: T | undefined, client: string, settings: StackSettings): T {
  if (value === undefined) throw new Error(`rpcstack:l2.client: ${client} has no network to follow on ${settings.network.name}`);
  return value;
}

type JunoSettings = Extract<L2Settings, { client: "juno" }>;

/** The L1 node an L2 node follows over WebSocket: the one on its own host. */
const ethNode = (settings: StackSettings, slot: NodeSlot) => l1Urls(l1SlotFor(settings, slot)).rpcWs;

function juno(settings: StackSettings, l2: JunoSettings, slot: NodeSlot): ServiceSpec {
  return {
    name: named("juno", slot),
    client: "juno",
    containerName: `rpcstack-${named("juno", slot)}`,
    image: settings.l2.image,
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
      `--network=${required(settings.network.l2.junoNetwork, "Juno", settings)}`,
      // Juno reads every flag from JUNO_<FLAG> too (cmd/juno/juno.go: viper, prefix JUNO): an
      // external L1's URL goes there, as a secret, never onto the command line.
      ...(settings.l1.external ? [] : [`--eth-node=${ethNode(settings, slot)}`]),
      // The flag config resolution chose for this release.
      l2.pollFlag,
      l2.pendingPollInterval,
    ],
    environment: {},
    ...(settings.l1.external ? { secretEnvironment: { JUNO_ETH_NODE: "RPCSTACK_L1_WS_URL" as const } } : {}),
    ports: [
      rpcPort(settings, slot, P.juno.http, "rpc"),
      privatePort(settings, slot, P.juno.ws, "ws"),
      { container: P.juno.metrics, protocol: "tcp", purpose: "metrics", metrics: scrapedAs("juno") },
    ],
    volumes: [{ volume: named("juno", slot), path: "/var/lib/juno" }],
    files: [],
    // Juno v0.17 migrates its database for ~8 minutes on its first start; failures then do not count.
    healthcheck: curlJsonRpc(P.juno.http, "starknet_chainId", JUNO_FIRST_START_SECONDS),
    restart: "unless-stopped",
    stopGraceSeconds: 120,
    dependsOn: [],
  };
}

function pathfinder(settings: StackSettings, slot: NodeSlot): ServiceSpec {
  return {
    name: named("pathfinder", slot),
    client: "pathfinder",
    containerName: `rpcstack-${named("pathfinder", slot)}`,
    image: settings.l2.image,
    command: [],
    environment: {
      RUST_LOG: "info",
      PATHFINDER_NETWORK: required(settings.network.l2.pathfinderNetwork, "Pathfinder", settings),
      ...(settings.l1.external ? {} : { PATHFINDER_ETHEREUM_API_URL: ethNode(settings, slot) }),
      PATHFINDER_HTTP_RPC_ADDRESS: `0.0.0.0:${P.pathfinder.rpc}`,
      PATHFINDER_WEBSOCKET_ENABLED: "true",
      PATHFINDER_MONITOR_ADDRESS: `0.0.0.0:${P.pathfinder.monitor}`,
      PATHFINDER_DATA_DIRECTORY: "/usr/share/pathfinder/data",
    },
    ...(settings.l1.external ? { secretEnvironment: { PATHFINDER_ETHEREUM_API_URL: "RPCSTACK_L1_WS_URL" as const } } : {}),
    ports: [rpcPort(settings, slot, P.pathfinder.rpc, "rpc"), { ...privatePort(settings, slot, P.pathfinder.monitor, "health"), metrics: scrapedAs("pathfinder") }],
    volumes: [{ volume: named("pathfinder", slot), path: "/usr/share/pathfinder/data" }],
    files: [],
    // /ready: started and serving (not necessarily synced; the gateway checks /ready/synced).
    healthcheck: bashHttpGet(P.pathfinder.monitor, "/ready", [200], 120),
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 120,
    dependsOn: [],
  };
}

/**
 * Starknet Devnet for the devnet network: a fresh chain in memory that seals a block every few
 * seconds. The image's entrypoint already is `tini -- starknet-devnet --host 0.0.0.0`.
 */
function starknetDevnet(settings: StackSettings): ServiceSpec {
  const dev = settings.network.dev;
  if (!dev) throw new Error(`rpcstack:l2.client: starknet-devnet runs only on network devnet, not ${settings.network.name}`);
  return {
    name: "starknet-devnet",
    containerName: "rpcstack-starknet-devnet",
    image: settings.l2.image,
    command: [
      `--port=${P.starknetDevnet.rpc}`,
      // Periodic blocks keep the head recent, which is what readiness calls synced.
      `--block-generation-on=${dev.l2BlockSeconds}`,
      // The same predeployed, funded accounts after every restart (the state lives in memory).
      "--seed=0",
    ],
    environment: {},
    ports: [{ container: P.starknetDevnet.rpc, protocol: "tcp", purpose: "rpc", publish: { address: "127.0.0.1", port: P.starknetDevnet.rpc } }],
    volumes: [],
    files: [],
    // Alpine image: BusyBox wget, no curl. JSON-RPC is served on / as well as /rpc.
    healthcheck: wgetJsonRpc(P.starknetDevnet.rpc, "starknet_chainId", 30),
    restart: "unless-stopped",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
}

export function l2Node(settings: StackSettings, slot: NodeSlot = FIRST.l2): ServiceSpec {
  const l2 = settings.l2;
  switch (l2.client) {
    case "juno":
      return juno(settings, l2, slot);
    case "pathfinder":
      return pathfinder(settings, slot);
    case "starknet-devnet":
      return starknetDevnet(settings);
  }
}

/** The indexer, started once `node` is healthy. */
export function indexer(settings: StackSettings, node: ServiceSpec): ServiceSpec {
  return {
    name: "indexer",
    containerName: "rpcstack-indexer",
    image: settings.indexer.image,
    command: [...settings.indexer.command],
    environment: { L2_RPC_URL: l2Urls(settings).rpcHttp, INDEXER_POLL_SECONDS: "10" },
    ports: [],
    volumes: [],
    files: [
      { from: "package", path: "/indexer/indexer.sh", source: "indexer/indexer.sh", executable: true },
      { from: "package", path: "/indexer/indexer.mjs", source: "indexer/indexer.mjs" },
    ],
    restart: "unless-stopped",
    user: "1000:1000",
    stopGraceSeconds: 10,
    dependsOn: [{ service: node.name, condition: "service_healthy" }],
  };
}

/**
 * The L2 node's containers by role (the restore from a snapshot first, where one is set), and the
 * line `pulumi up` says about how the node was configured.
 */
export type L2Role = Role<{ readonly restore?: ServiceSpec; readonly node: ServiceSpec; readonly indexer?: ServiceSpec; readonly rollout?: ServiceSpec }> & {
  readonly urls: L2Urls;
  readonly notice?: string;
  /** Said before a restore from a snapshot: from where, and how to watch it. */
  readonly restoreNotice?: string;
};

/**
 * One L2 node's containers (the layer's first unless `slot` names another), with the indexer
 * beside the first; each node restores its own volume.
 */
export function l2Role(settings: StackSettings, slot: NodeSlot = FIRST.l2): L2Role {
  const plain = l2Node(settings, slot);
  // The pinned runtime image, pulled for readiness anyway, has Node.js 22.15 or later.
  const own = l2Restore(settings.l2.snapshot, settings.readiness.image, plain);
  const restore = own && { ...own, name: named(RESTORE_SERVICE.name, slot), containerName: named(RESTORE_SERVICE.containerName, slot) };
  // The node starts only after the restore exited 0: restored, or the volume already held a database.
  const node = restore ? { ...plain, dependsOn: [...plain.dependsOn, { service: restore.name, condition: "service_completed_successfully" as const }] } : plain;
  const l2 = settings.l2;
  return {
    services: { ...(restore ? { restore } : {}), node, ...(settings.indexer.enabled && slot.index === 0 ? { indexer: indexer(settings, node) } : {}) },
    volumes: l2Volumes(settings, slot),
    urls: l2Urls(settings, slot),
    ...(l2.client === "juno" ? { notice: describeJunoPoll(l2.release, l2.pollFlag, l2.pendingPollInterval) } : {}),
    ...(restore && l2.snapshot
      ? { restoreNotice: `rpcstack: the L2 node's volume is restored from ${l2.snapshot.url} first, if it holds no database; watch it with: docker logs -f ${restore.containerName}` }
      : {}),
  };
}
