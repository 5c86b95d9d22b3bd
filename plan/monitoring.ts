/** Monitoring in the plan: Prometheus's service, its configuration and rules, and the dashboards, from the stack's services. Pure. */
import type { StackSettings } from "../config/index.js";
import { dashboards } from "../monitoring/dashboards.js";
import type { Dashboard, PrometheusConfig } from "../monitoring/model.js";
import { dashboardJson, grafanaProvisioning, prometheusYaml, rulesYaml } from "../monitoring/render.js";
import { alertRules } from "../monitoring/rules.js";
import { scrapeJobs } from "../monitoring/targets.js";
import { GRAFANA, GRAFANA_DASHBOARDS, monitoringRole, PROMETHEUS, PROMETHEUS_CONFIG, PROMETHEUS_RULES, type MonitoringRole } from "../services/monitoring.js";
import type { GeneratedFile, StackServices } from "../services/index.js";

export interface MonitoringPlan {
  readonly role: MonitoringRole;
  readonly prometheus: PrometheusConfig;
  /** prometheus.yml and the rule file, placed beside each other. */
  readonly files: readonly GeneratedFile<string>[];
  readonly dashboards: readonly Dashboard[];
  /** File name -> Grafana dashboard JSON. */
  readonly dashboardFiles: Readonly<Record<string, string>>;
  /** Grafana's provisioning files (data source, dashboard provider, the dashboards), under its provisioning folder. */
  readonly grafanaFiles: readonly GeneratedFile<string>[];
}

export function monitoringPlan(settings: StackSettings, services: StackServices): MonitoringPlan | undefined {
  const role = monitoringRole(settings);
  const m = settings.monitoring;
  if (!role || !m) return undefined;
  const jobs = scrapeJobs(settings, services);
  const prometheus: PrometheusConfig = { scrapeIntervalSeconds: m.scrapeIntervalSeconds, ruleFiles: [PROMETHEUS_RULES], jobs };
  // geth --dev has no peers by design: no alert for them there.
  const rules = alertRules(jobs, { p2p: !settings.network.dev });
  const boards = dashboards(jobs);
  const dashboardFiles = Object.fromEntries(boards.map((d) => [`${d.uid}.json`, dashboardJson(d)]));
  const provisioning = grafanaProvisioning(`http://${PROMETHEUS.name}:${PROMETHEUS.port}`, `${GRAFANA.provisioningDir}/${GRAFANA_DASHBOARDS}`);
  return {
    role,
    prometheus,
    files: [
      { name: PROMETHEUS_CONFIG, content: prometheusYaml(prometheus) },
      { name: PROMETHEUS_RULES, content: rulesYaml("rpcstack", rules) },
    ],
    dashboards: boards,
    dashboardFiles,
    grafanaFiles: [
      { name: "datasources/rpcstack.yml", content: provisioning.datasources },
      { name: "dashboards/rpcstack.yml", content: provisioning.dashboards },
      ...Object.entries(dashboardFiles).map(([name, content]) => ({ name: `${GRAFANA_DASHBOARDS}/${name}`, content })),
    ],
  };
}
