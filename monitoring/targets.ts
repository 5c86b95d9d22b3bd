/**
 * What Prometheus scrapes: every port of the stack's own host whose service spec says it serves
 * metrics (services/: the node clients, the readiness service's rotation gauges, the disk watcher,
 * the gateway's metrics listener and the usage keeper), as the job and at the path the port names.
 * Pure.
 */
import { MAIN_HOST, type StackSettings } from "../config/index.js";
import { METRICS_JOBS, type MetricsJob, type ServiceSpec, type StackServices } from "../services/index.js";
import type { ScrapeJob, ScrapeTarget } from "./model.js";

export function scrapeJobs(settings: StackSettings, services: StackServices): ScrapeJob[] {
  const jobs = new Map<MetricsJob, { path: string; targets: ScrapeTarget[] }>();
  const scrape = (svc: ServiceSpec | undefined, labels: Readonly<Record<string, string>> = {}) => {
    for (const port of svc?.ports ?? []) {
      for (const m of port.metrics ?? []) {
        const job = jobs.get(m.job) ?? { path: m.path, targets: [] };
        if (job.path !== m.path) throw new Error(`monitoring: job ${m.job} is served at ${job.path} and ${m.path}`);
        job.targets.push({ address: `${svc!.name}:${port.container}`, labels });
        jobs.set(m.job, job);
      }
    }
  };
  for (const layer of ["l1", "l2"] as const) {
    // Nodes on further hosts keep their metrics ports on their own host's private network.
    for (const n of services.nodes[layer].filter((x) => x.slot.host === MAIN_HOST)) {
      for (const svc of Object.values(n.role.services)) scrape(svc, { node: n.name, layer, chain: settings.network.chains[layer].path });
    }
  }
  for (const svc of Object.values(services.readiness.services)) scrape(svc);
  // The usage keeper shares HAProxy's network namespace: its port is HAProxy's too.
  for (const svc of Object.values(services.gateway.services)) scrape(svc);
  return METRICS_JOBS.flatMap((name) => {
    const job = jobs.get(name);
    return job ? [{ name, metricsPath: job.path, targets: job.targets }] : [];
  });
}
