/** The plan as Kubernetes objects (host kind kubernetes). Pure: no Pulumi, no I/O. */
export * from "./objects.js";
export { renderCluster, GATEWAY_SERVICE, RUNS_FOR, SECRETS_NAME, WAIT_FOR, type ClusterInput } from "./render.js";
export { workloads, type Workload } from "./workloads.js";
export { clusterScrapeConfig } from "./scrapeConfig.js";
