/** Prometheus on the stack's private network (rpcstack:monitoring). Pure data. */
import type { StackSettings } from "../config/index.js";
import type { Role, ServiceSpec } from "./types.js";

export const PROMETHEUS = { name: "prometheus", port: 9090, configDir: "/etc/prometheus", dataDir: "/prometheus" } as const;
/** prometheus.yml and the rule file, as plan/monitoring.ts writes them. */
export const PROMETHEUS_CONFIG = "prometheus.yml";
export const PROMETHEUS_RULES = "rpcstack-alerts.yml";

export const GRAFANA = { name: "grafana", port: 3000, provisioningDir: "/etc/grafana/provisioning", dataDir: "/var/lib/grafana" } as const;
/** Where the dashboards sit among Grafana's provisioning files (plan/monitoring.ts names them). */
export const GRAFANA_DASHBOARDS = "dashboards/rpcstack";

export type MonitoringRole = Role<{ readonly prometheus: ServiceSpec; readonly grafana?: ServiceSpec }>;

/** Grafana (official image, the operator's pin) with Prometheus and the dashboards provisioned; on the host's loopback only. */
function grafanaService(g: { readonly image: string; readonly port: number }): ServiceSpec {
  return {
    name: GRAFANA.name,
    containerName: "rpcstack-grafana",
    image: g.image,
    command: [],
    environment: {
      GF_PATHS_PROVISIONING: GRAFANA.provisioningDir,
      // Whoever holds the SSH tunnel may look; changing anything needs the admin login.
      GF_AUTH_ANONYMOUS_ENABLED: "true",
      GF_AUTH_ANONYMOUS_ORG_ROLE: "Viewer",
      GF_ANALYTICS_REPORTING_ENABLED: "false",
      GF_ANALYTICS_CHECK_FOR_UPDATES: "false",
    },
    ports: [{ container: GRAFANA.port, protocol: "tcp", purpose: "metrics", publish: { address: "127.0.0.1", port: g.port } }],
    volumes: [{ volume: "grafana", path: GRAFANA.dataDir }],
    files: [{ from: "generated", dir: GRAFANA.provisioningDir, set: "grafana" }],
    restart: "unless-stopped",
    stopGraceSeconds: 30,
    dependsOn: [{ service: PROMETHEUS.name, condition: "service_started" }],
  };
}

/** Undefined where monitoring is off. */
export function monitoringRole(settings: Pick<StackSettings, "monitoring" | "retainData">): MonitoringRole | undefined {
  const m = settings.monitoring;
  if (!m) return undefined;
  const prometheus: ServiceSpec = {
    name: PROMETHEUS.name,
    containerName: "rpcstack-prometheus",
    image: m.prometheusImage,
    entrypoint: ["/bin/prometheus"],
    command: [
      `--config.file=${PROMETHEUS.configDir}/${PROMETHEUS_CONFIG}`,
      `--storage.tsdb.path=${PROMETHEUS.dataDir}`,
      `--storage.tsdb.retention.time=${m.retentionDays}d`,
      // What the disk check counted (config/sizing.ts): the oldest blocks go first beyond it.
      `--storage.tsdb.retention.size=${m.retentionGB}GB`,
      `--web.listen-address=0.0.0.0:${PROMETHEUS.port}`,
    ],
    environment: {},
    // Loopback only: the operator comes in through an SSH tunnel (docs/monitoring.md), nobody else.
    ports: [{ container: PROMETHEUS.port, protocol: "tcp", purpose: "metrics", publish: { address: "127.0.0.1", port: m.port } }],
    volumes: [{ volume: "prometheus", path: PROMETHEUS.dataDir }],
    files: [{ from: "generated", dir: PROMETHEUS.configDir, set: "monitoring" }],
    // The official image is BusyBox-based: its wget is there.
    healthcheck: { test: ["CMD", "wget", "-q", "-O", "/dev/null", `http://127.0.0.1:${PROMETHEUS.port}/-/ready`], intervalSeconds: 30, timeoutSeconds: 10, retries: 3, startPeriodSeconds: 30 },
    restart: "unless-stopped",
    stopGraceSeconds: 30,
    dependsOn: [],
  };
  return {
    services: { prometheus, ...(m.grafana ? { grafana: grafanaService(m.grafana) } : {}) },
    volumes: [
      { key: "prometheus", name: "rpcstack-prometheus", purpose: "Prometheus's time series (monitoring.retentionDays, at most monitoring.retentionGB)", retain: settings.retainData },
      ...(m.grafana ? [{ key: "grafana", name: "rpcstack-grafana", purpose: "Grafana's own state (users, preferences)", retain: settings.retainData }] : []),
    ],
  };
}
