/** Ethereum L1: a one-shot JWT init, geth (execution) and Lighthouse (consensus). */
import type { StackSettings } from "../config/index.js";
import { bashHttpGet, wgetJsonRpc } from "./health.js";
import { PORTS } from "./ports.js";
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
export type L1Urls = ReturnType<typeof l1Urls>;
const EXTERNAL_L1 = "external (rpcstack:l1.external)";
export function l1Urls() {
  return {
    rpcHttp: `http://geth:${P.geth.http}`,
    rpcWs: `ws://geth:${P.geth.ws}`,
    beaconApi: `http://lighthouse:${P.lighthouse.api}`,
  };
}

export function l1Volumes(settings: StackSettings): VolumeSpec[] {
  // geth --dev without --datadir keeps its chain in memory, and an external L1 keeps its own: nothing on disk here.
  if (settings.network.dev || settings.l1.external) return [];
  const net = settings.network.l1.network;
  const retain = settings.retainData;
  return [
    { key: "jwt", name: `rpcstack-${net}-jwt`, purpose: "engine API JWT secret shared by geth and Lighthouse", retain },
    { key: "geth", name: `rpcstack-${net}-geth`, purpose: "geth chain data (/root/.ethereum)", retain },
    { key: "lighthouse", name: `rpcstack-${net}-lighthouse`, purpose: "Lighthouse beacon data (/root/.lighthouse)", retain },
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

/** Loopback only: the operator guide's `curl localhost:8545` check works on the host. */
const RPC_PORTS: PortSpec[] = [
  { container: P.geth.http, protocol: "tcp", purpose: "rpc", publish: { address: "127.0.0.1", port: P.geth.http } },
  { container: P.geth.ws, protocol: "tcp", purpose: "ws", publish: { address: "127.0.0.1", port: P.geth.ws } },
];

/**
 * geth --dev for the devnet network: a fresh chain in memory that seals a block every
 * `l1BlockSeconds` through its simulated beacon, so no consensus client, JWT or peers.
 */
function gethDev(settings: StackSettings, blockSeconds: number): ServiceSpec {
  return {
    name: "geth",
    containerName: "rpcstack-geth",
    image: settings.l1.executionImage,
    command: ["--dev", `--dev.period=${blockSeconds}`, ...RPC_FLAGS, "--metrics", "--metrics.addr=0.0.0.0", `--metrics.port=${P.geth.metrics}`],
    environment: {},
    ports: [...RPC_PORTS, { container: P.geth.metrics, protocol: "tcp", purpose: "metrics" }],
    volumes: [],
    files: [],
    healthcheck: wgetJsonRpc(P.geth.http, "eth_blockNumber", 30),
    restart: "unless-stopped",
    stopGraceSeconds: 30,
    dependsOn: [],
  };
}

/** The L1 node's containers by role: JWT init, execution and consensus client (execution only on devnet; none with an external L1). */
export type L1Role = Role<{ readonly jwtInit?: ServiceSpec; readonly execution?: ServiceSpec; readonly consensus?: ServiceSpec }> & { readonly urls: L1Urls };

export const l1Services = (settings: StackSettings): ServiceGroup => groupOf(l1Role(settings));

export function l1Role(settings: StackSettings): L1Role {
  // An L1 node elsewhere (l1.external): nothing of L1 runs here.
  // Its URLs are secrets: what the outputs show says where they are configured instead.
  if (settings.l1.external) return { services: {}, volumes: l1Volumes(settings), urls: { rpcHttp: EXTERNAL_L1, rpcWs: EXTERNAL_L1, beaconApi: EXTERNAL_L1 } };
  if (settings.network.dev) return { services: { execution: gethDev(settings, settings.network.dev.l1BlockSeconds) }, volumes: l1Volumes(settings), urls: l1Urls() };
  const consensusImage = settings.l1.consensusImage;
  const checkpointSyncUrl = settings.l1.checkpointSyncUrl;
  if (!consensusImage || !checkpointSyncUrl) throw new Error(`rpcstack:l1.consensusImage: network ${settings.network.name} needs a consensus client`);
  const net = settings.network.l1.network;
  const jwtInit: ServiceSpec = {
    name: "jwt-init",
    containerName: "rpcstack-jwt-init",
    // The geth image is Alpine-based, so it has od/tr, and it is pulled anyway.
    image: settings.l1.executionImage,
    entrypoint: ["/bin/sh", "-c"],
    command: [JWT_INIT_SCRIPT],
    environment: {},
    ports: [],
    volumes: [{ volume: "jwt", path: "/jwt" }],
    files: [],
    restart: "no",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
  const geth: ServiceSpec = {
    name: "geth",
    containerName: "rpcstack-geth",
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
      `--port=${P.geth.p2p}`,
    ],
    environment: {},
    ports: [
      p2p(P.geth.p2p, "tcp"),
      p2p(P.geth.p2p, "udp"),
      ...RPC_PORTS,
      { container: P.geth.engine, protocol: "tcp", purpose: "engine" },
      { container: P.geth.metrics, protocol: "tcp", purpose: "metrics" },
    ],
    volumes: [
      { volume: "geth", path: "/root/.ethereum" },
      { volume: "jwt", path: "/jwt", readOnly: true },
    ],
    files: [],
    healthcheck: wgetJsonRpc(P.geth.http, "eth_blockNumber", 120),
    restart: "unless-stopped",
    stopGraceSeconds: 180,
    dependsOn: [{ service: "jwt-init", condition: "service_completed_successfully" }],
  };
  const lighthouse: ServiceSpec = {
    name: "lighthouse",
    containerName: "rpcstack-lighthouse",
    image: consensusImage,
    command: [
      "lighthouse",
      "bn",
      `--network=${net}`,
      "--datadir=/root/.lighthouse",
      `--execution-endpoint=http://geth:${P.geth.engine}`,
      `--execution-jwt=${JWT_PATH}`,
      `--checkpoint-sync-url=${checkpointSyncUrl}`,
      "--http",
      "--http-address=0.0.0.0",
      `--http-port=${P.lighthouse.api}`,
      "--metrics",
      "--metrics-address=0.0.0.0",
      `--metrics-port=${P.lighthouse.metrics}`,
      `--port=${P.lighthouse.p2p}`,
      `--quic-port=${P.lighthouse.quic}`,
    ],
    environment: {},
    ports: [
      p2p(P.lighthouse.p2p, "tcp"),
      p2p(P.lighthouse.p2p, "udp"),
      p2p(P.lighthouse.quic, "udp"),
      { container: P.lighthouse.api, protocol: "tcp", purpose: "api" },
      { container: P.lighthouse.metrics, protocol: "tcp", purpose: "metrics" },
    ],
    volumes: [
      { volume: "lighthouse", path: "/root/.lighthouse" },
      { volume: "jwt", path: "/jwt", readOnly: true },
    ],
    files: [],
    // 200 synced, 206 syncing: both mean the API is serving.
    healthcheck: bashHttpGet(P.lighthouse.api, "/eth/v1/node/health", [200, 206], 300),
    restart: "unless-stopped",
    stopGraceSeconds: 120,
    dependsOn: [
      { service: "jwt-init", condition: "service_completed_successfully" },
      { service: "geth", condition: "service_started" },
    ],
  };
  return { services: { jwtInit, execution: geth, consensus: lighthouse }, volumes: l1Volumes(settings), urls: l1Urls() };
}
