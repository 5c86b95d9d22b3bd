import type { MetricsEndpoint, MetricsJob } from "./types.js";

/** Container ports of the clients, as their own documentation gives them (geth, Lighthouse, Juno, Pathfinder). */
export const PORTS = {
  geth: { http: 8545, ws: 8546, engine: 8551, p2p: 30303, metrics: 6060 },
  lighthouse: { api: 5052, metrics: 5054, p2p: 9000, quic: 9001 },
  juno: { http: 6060, ws: 6061, metrics: 9090 },
  // Pathfinder's monitor (health/readiness/metrics) must avoid 9545 (RPC) and 9000 (Lighthouse p2p).
  pathfinder: { rpc: 9545, monitor: 9099 },
  // Starknet Devnet's default port (its docs, "Run with Docker").
  starknetDevnet: { rpc: 5050 },
} as const;

/** The readiness program's live health endpoint (/ready/l1, /ready/l2) on the private network. */
export const SYNC_HEALTH_PORT = 8080;

/** What Prometheus scrapes on a port: `job` at `path`; geth's metrics server serves /debug/metrics/prometheus (go-ethereum metrics/exp). */
export const scrapedAs = (job: MetricsJob, path = "/metrics"): readonly MetricsEndpoint[] => [{ job, path }];
export const GETH_METRICS_PATH = "/debug/metrics/prometheus";
