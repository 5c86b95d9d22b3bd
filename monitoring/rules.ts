/**
 * rpcstack's alert rules, for the parts a stack runs: each names the chain, node or volume in its
 * labels (from the series, never a key) and says what to do. Tested with `promtool test rules`. Pure.
 */
import type { MetricsJob } from "../services/index.js";
import { jobIs, type AlertRule, type ScrapeJob } from "./model.js";

/** `jobs`: what is scraped; a rule is written only where its series can exist. */
export function alertRules(jobs: readonly ScrapeJob[], opts: { readonly p2p: boolean }): AlertRule[] {
  const has = (job: MetricsJob) => jobs.some((j) => j.name === job);
  return [
    {
      alert: "RpcstackTargetDown",
      expr: "up == 0",
      forMinutes: 3,
      severity: "warning",
      summary: "{{ $labels.job }} at {{ $labels.instance }} does not answer Prometheus",
      action: "The container is down or hung: docker ps -a, then docker logs of the container named after the job (rpcstack-<job>); its own alerts cannot fire while it is silent.",
    },
    ...(has("rotation")
      ? [
          {
            alert: "RpcstackNodeOutOfRotation",
            expr: "rpcstack_node_out_reason == 1",
            forMinutes: 2,
            severity: "warning" as const,
            summary: "Node {{ $labels.node }} of chain {{ $labels.chain }} is out of rotation: {{ $labels.reason }}",
            action:
              "The gateway sends it no calls. lagging: it fell behind the chain's best head (disk, CPU or peers); not_synced: it is still syncing or lost its L1; unreachable: its container is down (docker logs); wrong_chain: it follows another network than the stack's (check its network flag and data volume).",
          },
          {
            alert: "RpcstackNoNodeInRotation",
            expr: "max by (chain, layer) (rpcstack_node_in_rotation) == 0",
            forMinutes: 1,
            severity: "critical" as const,
            summary: "No node of chain {{ $labels.chain }} is fit to serve: its relays answer 503",
            action: "Every node of the chain is out of rotation: see RpcstackNodeOutOfRotation for each one's reason, and bring one back first.",
          },
        ]
      : []),
    ...(has("disk")
      ? [
          {
            alert: "RpcstackVolumeFilling",
            expr: "rpcstack_volume_used_ratio > on (instance) group_left rpcstack_volume_warn_ratio",
            forMinutes: 10,
            severity: "warning" as const,
            summary: "Data volume {{ $labels.volume }} is {{ $value | humanizePercentage }} full",
            action: "Grow the disk (rpcstack:host.diskGB or a bigger tier) or prune history (rpcstack:l1.history) before it reaches disk.stopPercent, where the gateway stops routing to its node.",
          },
          {
            alert: "RpcstackVolumeFull",
            expr: "rpcstack_volume_used_ratio > on (instance) group_left rpcstack_volume_stop_ratio",
            forMinutes: 1,
            severity: "critical" as const,
            summary: "Data volume {{ $labels.volume }} is past disk.stopPercent: its node is out of rotation",
            action: "The gateway no longer routes to the node on this volume. Free or add space now: a database that fills its disk can corrupt.",
          },
        ]
      : []),
    ...(opts.p2p && has("geth")
      ? [
          {
            alert: "RpcstackNoPeers",
            // Lighthouse sets libp2p_peers only when a peer connects or leaves: one that never had a
            // peer has no such series at all (seen on v5.3.0), so a scraped Lighthouse without it counts too.
            expr: `p2p_peers{${jobIs("geth")}} == 0 or libp2p_peers{${jobIs("lighthouse")}} == 0 or (up{${jobIs("lighthouse")}} == 1 unless on (instance) libp2p_peers{${jobIs("lighthouse")}})`,
            forMinutes: 10,
            severity: "warning" as const,
            summary: "{{ $labels.job }} of node {{ $labels.node }} has no peers",
            action: "It cannot follow the chain. Check that the p2p ports (30303 for geth, 9000 and 9001/udp for Lighthouse) are open in the host's firewall and security group, and that the host's clock is right.",
          },
        ]
      : []),
    ...(has("gateway")
      ? [
          {
            alert: "RpcstackGateway5xx",
            expr: 'sum by (proxy) (rate(haproxy_frontend_http_responses_total{code="5xx"}[5m])) / sum by (proxy) (rate(haproxy_frontend_http_responses_total[5m])) > 0.05',
            forMinutes: 5,
            severity: "critical" as const,
            summary: "{{ $value | humanizePercentage }} of the gateway's answers on {{ $labels.proxy }} are 5xx",
            action: "Developers see errors. 503s mean no node in rotation (see RpcstackNoNodeInRotation); 502 and 504 mean nodes that fail or time out: their logs, and the gateway's (docker logs rpcstack-gateway).",
          },
        ]
      : []),
  ];
}
