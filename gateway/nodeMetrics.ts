/**
 * Each node's rotation state (in rotation, lag in blocks, why out), which the readiness service
 * publishes as Prometheus metrics, served again on the gateway's private metrics listener at
 * /metrics/nodes, beside HAProxy's own per-server metrics at /metrics. Pure.
 */
import type { Section } from "./model.js";
import { parseUpstream } from "./upstreams.js";
import type { GatewayOptions } from "./types.js";

export const NODE_METRICS_PATH = "/metrics/nodes";
const BACKEND = "be_node_metrics";

/** The path the metrics listener relays, when the stack publishes node metrics. */
export const nodeMetricsRoutes = (o: GatewayOptions) => (o.nodeMetricsUrl ? [{ path: NODE_METRICS_PATH, backend: BACKEND }] : []);

export function nodeMetricsBackend(o: GatewayOptions): Section[] {
  if (!o.nodeMetricsUrl) return [];
  const u = parseUpstream(o.nodeMetricsUrl);
  return [
    {
      header: ["backend", BACKEND],
      comment: "Each node's rotation state, from the readiness service.",
      directives: [
        ["http-request", "set-path", u.basePath || "/"],
        ["http-request", "set-header", "Host", `${u.host}:${u.port}`],
        ["server", "s1", `${u.host}:${u.port}`],
      ],
    },
  ];
}
