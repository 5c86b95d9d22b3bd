/** Ethereum L1: a one-shot JWT init, geth (execution) and Lighthouse (consensus), per node. */
import type { NodeSlot, StackSettings } from "../config/index.js";
import { chainData } from "./chainData.js";
import { bashHttpGet, wgetJsonRpc } from "./health.js";
import { GETH_METRICS_PATH, PORTS, scrapedAs } from "./ports.js";
import { FIRST, named, reach, rpcPort } from "./slots.js";
import { groupOf, type PortSpec, type Role, type ServiceGroup, type ServiceSpec, type VolumeSpec } from "./types.js";

export const JWT_PATH = "/jwt/jwt.hex";

/** A p2p port, published on every interface: peers must reach it. */
const p2p = (port: number, protocol: "tcp" | "udp"): PortSpec => ({ container: port, protocol, purpose: "p2p", publish: { address: "0.0.0.0", port } });
const P = PORTS;

// 32 random bytes as hex, written once on the host; never in the repo, state or outputs.
const JWT_INIT_SCRIPT =
  `set -eu; umask 077; if [ ! -s ${JWT_PATH} ]; then ` +
  `od -An -tx1 -N32 /dev/urandom | tr -d ' \\n' > ${JWT_PATH}.tmp && mv ${JWT_PATH}.tmp ${JWT_PATH}; fi; ` +
  `test "$(wc -c < ${JWT_PATH})" -eq 64`;

/** The in-network URLs other services use to reach the L1 node. */
export interface L1Urls {
  readonly rpcHttp: string;
  readonly rpcWs: string;
  readonly beaconApi: string;
}
const EXTERNAL_L1 = "external (rpcstack:l1.external)";

/** The node's URLs on its own host's network: what the L2 node beside it follows. */
export function l1Urls(slot: NodeSlot = FIRST.l1): L1Urls {
  return {
    rpcHttp: `http://${named("geth", slot)}:${P.geth.http}`,
    rpcWs: `ws://${named("geth", slot)}:${P.geth.ws}`,
    beaconApi: `http://${named("lighthouse", slot)}:${P.lighthouse.api}`,
  };
}

/** Where the gateway's host reaches the node's RPC (its private address on a further host). */
export const l1Reach = (settings: Pick<StackSettings, "hosts">, slot: NodeSlot = FIRST.l1): Pick<L1Urls, "rpcHttp" | "rpcWs"> => ({
  rpcHttp: `http://${reach(settings, slot, named("geth", slot), P.geth.http)}`,
  rpcWs: `ws://${reach(settings, slot, named("geth", slot), P.geth.ws)}`,
});

export function l1Volumes(settings: StackSettings, slot: NodeSlot = FIRST.l1): VolumeSpec[] {
  // geth --dev without --datadir keeps its chain in memory, and an external L1 keeps its own: nothing on disk here.
  if (settings.network.dev || settings.l1.external) return [];
  const net = settings.network.l1.network;
  const retain = settings.retainData;
  const v = (key: string) => ({ key: named(key, slot), name: `rpcstack-${net}-${named(key, slot)}` });
  return [
    { ...v("jwt"), purpose: "engine API JWT secret shared by geth and Lighthouse", retain },
    { ...v("geth"), purpose: "geth chain data (/root/.ethereum)", retain, ...chainData(settings, "geth", slot) },
    { ...v("lighthouse"), purpose: "Lighthouse beacon data (/root/.lighthouse)", retain, ...chainData(settings, "lighthouse", slot) },
  ];
}

/** JSON-RPC over HTTP and WS, eth/net/web3 only, for the gateway, the L2 node and readiness. */
const RPC_FLAGS = [
  "--http",
  "--http.addr=0.0.0.0",
  `--http.port=${P.geth.http}`,
  "--http.api=eth,net,web3",
  // Reached by service name from the gateway and the L2 node; the port is never public.
  "--http.vhosts=*",
  "--ws",
  "--ws.addr=0.0.0.0",
  `--ws.port=${P.geth.ws}`,
  "--ws.api=eth,net,web3",
  "--ws.origins=*",
] as const;

/** Loopback only on the stack's host: the operator guide's `curl localhost:8545` check works there. */
const rpcPorts = (settings: Pick<StackSettings, "hosts">, slot: NodeSlot): PortSpec[] => [rpcPort(settings, slot, P.geth.http, "rpc"), rpcPort(settings, slot, P.geth.ws, "ws")];

/**
 * geth --dev for the devnet network: a fresh chain in memory that seals a block every
 * `l1BlockSeconds` through its simulated beacon, so no consensus client, JWT or peers.
 */
function gethDev(settings: StackSettings, blockSeconds: number): ServiceSpec {
  return {
    name: "geth",
    client: "geth",
    containerName: "rpcstack-geth",
    image: settings.l1.executionImage,
    command: ["--dev", `--dev.period=${blockSeconds}`, ...RPC_FLAGS, "--metrics", "--metrics.addr=0.0.0.0", `--metrics.port=${P.geth.metrics}`],
    environment: {},
    ports: [...rpcPorts(settings, FIRST.l1), { container: P.geth.metrics, protocol: "tcp", purpose: "metrics", metrics: scrapedAs("geth", GETH_METRICS_PATH) }],
    volumes: [],
    files: [],
    healthcheck: wgetJsonRpc(P.geth.http, "eth_blockNumber", 30),
    restart: "unless-stopped",
    stopGraceSeconds: 30,
    dependsOn: [],
  };
}

/** The L1 node's containers by role: JWT init, execution and consensus client (execution only on devnet; none with an external L1). */
export type L1Role = Role<{ readonly jwtInit?: ServiceSpec; readonly execution?: ServiceSpec; readonly consensus?: ServiceSpec; readonly rollout?: ServiceSpec }> & { readonly urls: L1Urls };

export const l1Services = (settings: StackSettings): ServiceGroup => groupOf(l1Role(settings));

/** One L1 node's containers: the layer's first unless `slot` names another. */
export function l1Role(settings: StackSettings, slot: NodeSlot = FIRST.l1): L1Role {
  // An L1 node elsewhere (l1.external): nothing of L1 runs here.
  // Its URLs are secrets: what the outputs show says where they are configured instead.
  if (settings.l1.external) return { services: {}, volumes: l1Volumes(settings), urls: { rpcHttp: EXTERNAL_L1, rpcWs: EXTERNAL_L1, beaconApi: EXTERNAL_L1 } };
  if (settings.network.dev) return { services: { execution: gethDev(settings, settings.network.dev.l1BlockSeconds) }, volumes: l1Volumes(settings), urls: l1Urls() };
  const consensusImage = settings.l1.consensusImage;
  const checkpointSyncUrl = settings.l1.checkpointSyncUrl;
  if (!consensusImage || !checkpointSyncUrl) throw new Error(`rpcstack:l1.consensusImage: network ${settings.network.name} needs a consensus client`);
  const net = settings.network.l1.network;
  const n = (base: string) => named(base, slot);
  // A second node on one host listens for peers on ports of its own, and says so in its records.
  const gethP2p = P.geth.p2p + slot.portOffset;
  const [lhP2p, lhQuic] = [P.lighthouse.p2p + slot.portOffset, P.lighthouse.quic + slot.portOffset];
  const jwtInit: ServiceSpec = {
    name: n("jwt-init"),
    containerName: `rpcstack-${n("jwt-init")}`,
    // The geth image is Alpine-based, so it has od/tr, and it is pulled anyway.
    image: settings.l1.executionImage,
    entrypoint: ["/bin/sh", "-c"],
    command: [JWT_INIT_SCRIPT],
    environment: {},
    ports: [],
    volumes: [{ volume: n("jwt"), path: "/jwt" }],
    files: [],
    restart: "no",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
  const geth: ServiceSpec = {
    name: n("geth"),
    client: "geth",
    containerName: `rpcstack-${n("geth")}`,
    image: settings.l1.executionImage,
    command: [
      `--${net}`,
      "--datadir=/root/.ethereum",
      // geth v1.17.5 refuses to start on a database that still holds older history than this mode
      // keeps ("history pruning required"): README says how to prune an existing volume.
      `--history.chain=${settings.l1.history ?? "all"}`,
      ...RPC_FLAGS,
      "--authrpc.addr=0.0.0.0",
      `--authrpc.port=${P.geth.engine}`,
      "--authrpc.vhosts=*",
      `--authrpc.jwtsecret=${JWT_PATH}`,
      "--metrics",
      "--metrics.addr=0.0.0.0",
      `--metrics.port=${P.geth.metrics}`,
      `--port=${gethP2p}`,
    ],
    environment: {},
    ports: [
      p2p(gethP2p, "tcp"),
      p2p(gethP2p, "udp"),
      ...rpcPorts(settings, slot),
      { container: P.geth.engine, protocol: "tcp", purpose: "engine" },
      { container: P.geth.metrics, protocol: "tcp", purpose: "metrics", metrics: scrapedAs("geth", GETH_METRICS_PATH) },
    ],
    volumes: [
      { volume: n("geth"), path: "/root/.ethereum" },
      { volume: n("jwt"), path: "/jwt", readOnly: true },
    ],
    files: [],
    healthcheck: wgetJsonRpc(P.geth.http, "eth_blockNumber", 120),
    restart: "unless-stopped",
    stopGraceSeconds: 180,
    dependsOn: [{ service: n("jwt-init"), condition: "service_completed_successfully" }],
  };
  const lighthouse: ServiceSpec = {
    name: n("lighthouse"),
    client: "lighthouse",
    containerName: `rpcstack-${n("lighthouse")}`,
    image: consensusImage,
    command: [
      "lighthouse",
      "bn",
      `--network=${net}`,
      "--datadir=/root/.lighthouse",
      `--execution-endpoint=http://${n("geth")}:${P.geth.engine}`,
      `--execution-jwt=${JWT_PATH}`,
      `--checkpoint-sync-url=${checkpointSyncUrl}`,
      "--http",
      "--http-address=0.0.0.0",
      `--http-port=${P.lighthouse.api}`,
      "--metrics",
      "--metrics-address=0.0.0.0",
      `--metrics-port=${P.lighthouse.metrics}`,
      `--port=${lhP2p}`,
      `--quic-port=${lhQuic}`,
    ],
    environment: {},
    ports: [
      p2p(lhP2p, "tcp"),
      p2p(lhP2p, "udp"),
      p2p(lhQuic, "udp"),
      { container: P.lighthouse.api, protocol: "tcp", purpose: "api" },
      { container: P.lighthouse.metrics, protocol: "tcp", purpose: "metrics", metrics: scrapedAs("lighthouse") },
    ],
    volumes: [
      { volume: n("lighthouse"), path: "/root/.lighthouse" },
      { volume: n("jwt"), path: "/jwt", readOnly: true },
    ],
    files: [],
    // 200 synced, 206 syncing: both mean the API is serving.
    healthcheck: bashHttpGet(P.lighthouse.api, "/eth/v1/node/health", [200, 206], 300),
    restart: "unless-stopped",
    stopGraceSeconds: 120,
    dependsOn: [
      { service: n("jwt-init"), condition: "service_completed_successfully" },
      { service: n("geth"), condition: "service_started" },
    ],
  };
  return { services: { jwtInit, execution: geth, consensus: lighthouse }, volumes: l1Volumes(settings, slot), urls: l1Urls(slot) };
}
