/**
 * rpcstack's Grafana dashboards: relays as developers see them (calls, errors, cache, rotation)
 * and the nodes' own view (head, peers, disk). A panel is drawn only where its job is scraped,
 * so every query names series the stack exports. Pure.
 */
import { jobIs, type Dashboard, type Panel, type ScrapeJob } from "./model.js";

const RELAYS: readonly Panel[] = [
  { title: "Calls per second, per chain backend", job: "gateway", unit: "reqps", legend: "{{proxy}}", expr: "sum by (proxy) (rate(haproxy_backend_http_requests_total[5m]))" },
  { title: "5xx answers per second, per frontend", job: "gateway", unit: "reqps", legend: "{{proxy}}", expr: 'sum by (proxy) (rate(haproxy_frontend_http_responses_total{code="5xx"}[5m]))' },
  { title: "4xx answers per second (429: over a key's rate), per frontend", job: "gateway", unit: "reqps", legend: "{{proxy}}", expr: 'sum by (proxy) (rate(haproxy_frontend_http_responses_total{code="4xx"}[5m]))' },
  { title: "Calls per second, per project key and chain", job: "usage", unit: "reqps", legend: "{{key}} {{chain}} {{interface}}", expr: "sum by (key, chain, interface) (rate(rpcstack_usage_calls_total[5m]))" },
  { title: "Average answer time, per chain backend", job: "gateway", unit: "s", legend: "{{proxy}}", expr: "max by (proxy) (haproxy_backend_response_time_average_seconds)" },
  {
    title: "Cache hit ratio, per chain",
    job: "gateway-cache",
    unit: "percentunit",
    legend: "{{chain}}",
    expr: "sum by (chain) (rate(rpcstack_cache_hits_total[5m])) / clamp_min(sum by (chain) (rate(rpcstack_cache_requests_total[5m])), 1e-9)",
  },
  { title: "Nodes in rotation, per chain", job: "rotation", unit: "short", legend: "{{chain}}", expr: "sum by (chain) (rpcstack_node_in_rotation)" },
  { title: "Blocks behind the chain's best head, per node", job: "rotation", unit: "short", legend: "{{chain}} {{node}}", expr: "max by (chain, node) (rpcstack_node_lag_blocks)" },
];

const NODES: readonly Panel[] = [
  { title: "Head block, per node (as polled)", job: "rotation", unit: "short", legend: "{{chain}} {{node}}", expr: "max by (chain, node) (rpcstack_node_head_block)" },
  { title: "geth: head block", job: "geth", unit: "short", legend: "{{node}}", expr: `max by (node) (chain_head_block{${jobIs("geth")}})` },
  { title: "geth: peers", job: "geth", unit: "short", legend: "{{node}}", expr: `max by (node) (p2p_peers{${jobIs("geth")}})` },
  { title: "Lighthouse: peers", job: "lighthouse", unit: "short", legend: "{{node}}", expr: `max by (node) (libp2p_peers{${jobIs("lighthouse")}})` },
  { title: "Data volume use", job: "disk", unit: "percentunit", legend: "{{volume}}", expr: "max by (volume) (rpcstack_volume_used_ratio)" },
];

export function dashboards(jobs: readonly ScrapeJob[]): Dashboard[] {
  const scraped = new Set(jobs.map((j) => j.name));
  const drawn = (ps: readonly Panel[]) => ps.filter((p) => scraped.has(p.job));
  return [
    { uid: "rpcstack-relays", title: "rpcstack: relays", panels: drawn(RELAYS) },
    { uid: "rpcstack-nodes", title: "rpcstack: nodes", panels: drawn(NODES) },
  ];
}
