/** rpcstack:monitoring resolved: on by default where a host serves the public, off on `local`. Pure. */
import { problem } from "./errors.js";
import { isObj } from "./guards.js";
import { MONITORING_IMAGES } from "./networks/images.js";
import { monitoringSchema } from "./monitoringSchema.js";
import type { MonitoringSettings, RawConfig } from "./types.js";

const M = monitoringSchema.properties;

/**
 * A public stack (aws, ssh) gets it unless switched off: someone is on call for it. The `local`
 * stack is a trial on the operator's machine: one more image to pull and nobody paged, so it is
 * off unless switched on.
 */
export function resolveMonitoring(raw: RawConfig): MonitoringSettings | undefined {
  const m = raw.monitoring ?? {};
  // A cluster has its own Prometheus (config/kubernetesRules.ts): off there.
  if (!(m.enabled ?? (raw.host?.kind !== "local" && raw.host?.kind !== "kubernetes"))) return undefined;
  return {
    prometheusImage: m.prometheusImage ?? MONITORING_IMAGES.prometheus,
    retentionDays: m.retentionDays ?? M.retentionDays.default,
    retentionGB: m.retentionGB ?? M.retentionGB.default,
    scrapeIntervalSeconds: m.scrapeIntervalSeconds ?? M.scrapeIntervalSeconds.default,
    port: m.port ?? M.port.default,
    ...(m.grafanaImage ? { grafana: { image: m.grafanaImage, port: m.grafanaPort ?? M.grafanaPort.default } } : {}),
  };
}

/** Prometheus and Grafana publish on the same loopback: one port each. */
export function monitoringProblems(raw: RawConfig): string[] {
  const m = raw.monitoring;
  if (!isObj(m) || !m.grafanaImage) return [];
  const port = m.port ?? M.port.default;
  return (m.grafanaPort ?? M.grafanaPort.default) === port ? [problem(["monitoring", "grafanaPort"], `is ${port}, the port Prometheus takes (monitoring.port): give Grafana another`)] : [];
}
