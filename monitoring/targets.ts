/**
 * What Prometheus scrapes, from the services the stack runs: each node client's own metrics at
 * the flags its spec passes (services/l1.ts, l2.ts), the readiness service's rotation gauges, the
 * disk watcher, and the gateway's metrics listener (HAProxy's exporter and the cache's counters).
 * Pure.
 */
import { MAIN_HOST, type StackSettings } from "../config/index.js";
import { DISK_WATCH } from "../services/disk.js";
import { METRICS_PORT } from "../services/gateway.js";
import { USAGE_PORT } from "../services/usage.js";
import { PORTS, SYNC_HEALTH_PORT } from "../services/index.js";
import type { StackServices } from "../services/index.js";
import type { ScrapeJob, ScrapeTarget } from "./model.js";

/**
 * Where each client serves Prometheus text: geth's metrics server at /debug/metrics/prometheus
 * (go-ethereum metrics/exp), Lighthouse's and Juno's at /metrics, Pathfinder's monitor at /metrics.
 */
const CLIENTS = {
  geth: { port: PORTS.geth.metrics, path: "/debug/metrics/prometheus" },
  lighthouse: { port: PORTS.lighthouse.metrics, path: "/metrics" },
  juno: { port: PORTS.juno.metrics, path: "/metrics" },
  pathfinder: { port: PORTS.pathfinder.monitor, path: "/metrics" },
} as const;
type Client = keyof typeof CLIENTS;

/** `geth-2` is a second geth. */
const clientOf = (service: string): Client | undefined => {
  const base = service.replace(/-[0-9]+$/, "");
  return base in CLIENTS ? (base as Client) : undefined;
};

export function scrapeJobs(settings: StackSettings, services: StackServices): ScrapeJob[] {
  const byClient = new Map<Client, ScrapeTarget[]>();
  for (const layer of ["l1", "l2"] as const) {
    // Nodes on further hosts keep their metrics ports on their own host's private network.
    for (const n of services.nodes[layer].filter((x) => x.slot.host === MAIN_HOST)) {
      for (const svc of Object.values(n.role.services)) {
        const client = svc && clientOf(svc.name);
        if (!svc || !client) continue;
        const labels = { node: n.name, layer, chain: settings.network.chains[layer].path };
        byClient.set(client, [...(byClient.get(client) ?? []), { address: `${svc.name}:${CLIENTS[client].port}`, labels }]);
      }
    }
  }
  const at = (address: string): ScrapeTarget[] => [{ address, labels: {} }];
  const gateway = `${services.gateway.services.haproxy.name}:${METRICS_PORT}`;
  return [
    ...[...byClient].map(([client, targets]) => ({ name: client, metricsPath: CLIENTS[client].path, targets })),
    // Its gauges carry layer, node and chain themselves.
    { name: "rotation", metricsPath: "/metrics", targets: at(`${services.readiness.services.health.name}:${SYNC_HEALTH_PORT}`) },
    ...(services.readiness.services.diskWatch ? [{ name: "disk", metricsPath: "/metrics", targets: at(`${DISK_WATCH.name}:${DISK_WATCH.port}`) }] : []),
    { name: "gateway", metricsPath: "/metrics", targets: at(gateway) },
    // The keeper shares HAProxy's network namespace: its port is on HAProxy's address.
    { name: "usage", metricsPath: "/metrics", targets: at(`${services.gateway.services.haproxy.name}:${USAGE_PORT}`) },
    ...(settings.gateway.cache.enabled ? [{ name: "gateway-cache", metricsPath: "/metrics/cache", targets: at(gateway) }] : []),
  ];
}
