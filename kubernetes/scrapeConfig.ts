/**
 * The scrape job a cluster's own Prometheus needs to read the stack as rpcstack's dashboards and
 * rules do: the Services annotated `prometheus.io/scrape` in the stack's namespace (the usual
 * kubernetes-service-endpoints relabeling), with the job and target labels the Services carry
 * (`metrics.rpcstack.io/<name>`, SCRAPE_LABEL_PREFIX) mapped onto every series. Pure.
 */
import { SCRAPE_LABEL_PREFIX } from "./objects.js";

/** Prometheus's meta label for a Service label: every character outside [a-zA-Z0-9_] becomes _. */
const serviceLabel = (name: string) => `__meta_kubernetes_service_label_${name.replace(/[^a-zA-Z0-9_]/g, "_")}`;

export function clusterScrapeConfig(namespace: string, intervalSeconds = 15) {
  return {
    job_name: `rpcstack-${namespace}`,
    scrape_interval: `${intervalSeconds}s`,
    kubernetes_sd_configs: [{ role: "endpoints", namespaces: { names: [namespace] } }],
    relabel_configs: [
      { source_labels: ["__meta_kubernetes_service_annotation_prometheus_io_scrape"], regex: "true", action: "keep" },
      { source_labels: ["__meta_kubernetes_service_annotation_prometheus_io_path"], regex: "(.+)", target_label: "__metrics_path__" },
      { source_labels: ["__address__", "__meta_kubernetes_service_annotation_prometheus_io_port"], regex: "([^:]+)(?::\\d+)?;(\\d+)", replacement: "$1:$2", target_label: "__address__" },
      // The job and who it is (node, layer, chain), as the dashboards and rules read them.
      { action: "labelmap", regex: `${serviceLabel(SCRAPE_LABEL_PREFIX)}(.+)`, replacement: "$1" },
      { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
    ],
  };
}
