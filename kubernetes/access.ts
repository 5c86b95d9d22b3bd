/**
 * How the stack's pods are reached: the network policies between them and from elsewhere, and the
 * gateway's way in from outside the cluster. Pure.
 */
import type { KubernetesHostConfig, StackSettings } from "../config/index.js";
import { certificateNames, type PortSpec } from "../services/index.js";
import { PART_OF, WORKLOAD_LABEL, type K8sObject, type Rendered } from "./objects.js";
import { uniquePorts } from "./pods.js";
import type { Workload } from "./workloads.js";

export type Meta = (name: string, labels?: Record<string, string>) => K8sObject["metadata"];
export type Add = (object: K8sObject, o?: Omit<Rendered, "object">) => void;

/** The Service the gateway is reached by, from outside the cluster or from its ingress. */
export const GATEWAY_SERVICE = "rpcstack-gateway";

/**
 * What reaches the stack's pods: each other; the p2p ports from anywhere (peers); the metrics ports
 * from the cluster's Prometheus when `host.metricsFrom` names it (they tell every key's calls, 9107,
 * and the gateway's traffic, 8405); the gateway's 443 from anywhere. Nothing else: the nodes' RPC,
 * engine API and beacon API stay inside the stack, as on the Docker network.
 */
export function renderPolicies(all: readonly Workload[], host: KubernetesHostConfig, meta: Meta, add: Add) {
  const ports = (which: (p: PortSpec) => boolean) =>
    uniquePorts(all.flatMap((w) => w.containers.flatMap((c) => c.ports)).filter(which)).map((p) => ({ port: p.container, protocol: p.protocol.toUpperCase() }));
  const p2p = ports((p) => p.purpose === "p2p");
  const metrics = ports((p) => (p.metrics ?? []).length > 0);
  const from = host.metricsFrom;
  const prometheus = from && {
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": from.namespace } },
    ...(from.podLabels ? { podSelector: { matchLabels: { ...from.podLabels } } } : {}),
  };
  add({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: meta("rpcstack-internal"),
    spec: {
      podSelector: { matchLabels: PART_OF },
      policyTypes: ["Ingress"],
      ingress: [
        { from: [{ podSelector: { matchLabels: PART_OF } }] },
        ...(p2p.length ? [{ ports: p2p }] : []),
        ...(prometheus && metrics.length ? [{ from: [prometheus], ports: metrics }] : []),
      ],
    },
  });
  add({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: meta("rpcstack-gateway"),
    spec: { podSelector: { matchLabels: { [WORKLOAD_LABEL]: "gateway" } }, policyTypes: ["Ingress"], ingress: [{ ports: [{ port: 443, protocol: "TCP" }] }] },
  });
}

/**
 * The way in: a LoadBalancer or NodePort Service that keeps the caller's address (the gateway's
 * per-address limits need it), or a ClusterIP Service behind an Ingress that passes TLS through.
 */
export function renderWayIn(s: StackSettings, host: KubernetesHostConfig, meta: Meta, add: Add) {
  const e = host.expose;
  const labels = { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/component": "gateway" };
  const port = { name: "https", port: 443, targetPort: 443, protocol: "TCP", ...(e.kind === "NodePort" && e.nodePort ? { nodePort: e.nodePort } : {}) };
  add({
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(GATEWAY_SERVICE, labels),
    spec: { type: e.kind === "Ingress" ? "ClusterIP" : e.kind, ...(e.kind === "Ingress" ? {} : { externalTrafficPolicy: "Local" }), selector: { [WORKLOAD_LABEL]: "gateway" }, ports: [port] },
  });
  if (e.kind !== "Ingress") return;
  const m = meta(GATEWAY_SERVICE, labels);
  add({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    // HAProxy terminates TLS itself (WebSocket, gRPC and its own limits): the ingress passes it through.
    metadata: { ...m, annotations: { ...m.annotations, "nginx.ingress.kubernetes.io/ssl-passthrough": "true", "nginx.ingress.kubernetes.io/backend-protocol": "HTTPS" } },
    spec: {
      ...(e.ingressClass ? { ingressClassName: e.ingressClass } : {}),
      tls: [{ hosts: certificateNames(s), secretName: host.tlsSecret }],
      rules: certificateNames(s).map((h) => ({ host: h, http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: GATEWAY_SERVICE, port: { number: 443 } } } }] } })),
    },
  });
}
