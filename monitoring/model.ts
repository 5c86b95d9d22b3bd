/** What Prometheus is told, as typed data: scrape jobs, alert rules, dashboards. render.ts writes it. */
import type { MetricsJob } from "../services/index.js";

/** A PromQL matcher on the job label: the job's name is one the compiler knows. */
export const jobIs = (job: MetricsJob) => `job="${job}"`;

export interface ScrapeTarget {
  /** host:port on the stack's private network. */
  readonly address: string;
  /** Who it is, on every series scraped from it: node, layer, chain. Never a key or a URL with one. */
  readonly labels: Readonly<Record<string, string>>;
}

/** One kind of exporter; its name is the `job` label alerts and panels select by. */
export interface ScrapeJob {
  readonly name: MetricsJob;
  readonly metricsPath: string;
  readonly targets: readonly ScrapeTarget[];
}

export interface PrometheusConfig {
  readonly scrapeIntervalSeconds: number;
  /** File names beside prometheus.yml. */
  readonly ruleFiles: readonly string[];
  readonly jobs: readonly ScrapeJob[];
}

export type Severity = "warning" | "critical";

export interface AlertRule {
  readonly alert: string;
  /** PromQL; its result's labels say which chain, node or volume. */
  readonly expr: string;
  readonly forMinutes: number;
  readonly severity: Severity;
  /** One line, with `{{ $labels.x }}` templates. */
  readonly summary: string;
  /** What it means for developers and what to do about it. */
  readonly action: string;
}

export interface Panel {
  readonly title: string;
  readonly expr: string;
  /** Grafana's unit id: "reqps", "percentunit", "s", "short". */
  readonly unit: string;
  readonly legend: string;
  /** The scrape job whose metrics the query reads: a panel is drawn only where that job is scraped. */
  readonly job: MetricsJob;
}

export interface Dashboard {
  readonly uid: string;
  readonly title: string;
  readonly panels: readonly Panel[];
}
