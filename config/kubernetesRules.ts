/**
 * What a cluster cannot honour (host kind kubernetes), beside config/rules.ts: each refused with one
 * line naming the key. The cluster places and restarts the pods, so further hosts go; certificates come from the cluster (a TLS Secret), so the
 * ACME client goes; the cluster's own Prometheus scrapes the pods, so rpcstack's Prometheus goes.
 */
import { problem } from "./errors.js";
import { isObj } from "./guards.js";
import type { RawConfig } from "./types.js";

export function kubernetesProblems(raw: RawConfig, secretsAvailable: boolean): string[] {
  const host: Record<string, unknown> = isObj(raw.host) ? raw.host : {};
  const out: string[] = [];
  if (host.kind !== "kubernetes") {
    if (raw.kubeconfig !== undefined) out.push(problem(["kubeconfig"], `is only used when rpcstack:host.kind is kubernetes (it is ${String(host.kind)})`));
    return out;
  }
  const gw: Record<string, unknown> = isObj(raw.gateway) ? raw.gateway : {};
  const expose: Record<string, unknown> = isObj(host.expose) ? host.expose : {};
  const exposeKind = expose.kind ?? "LoadBalancer";
  if (secretsAvailable && raw.kubeconfig === undefined && host.context === undefined) {
    out.push(problem(["kubeconfig"], "is required when rpcstack:host.kind is kubernetes, unless rpcstack:host.context names a context of your own kubeconfig: pulumi config set --secret kubeconfig < cluster.yaml"));
  }
  if (raw.kubeconfig !== undefined && host.context !== undefined) {
    out.push(problem(["host", "context"], "goes with your own kubeconfig; rpcstack:kubeconfig names its cluster itself: set one of the two"));
  }
  // Deleting a namespace deletes every claim in it: only a stack that keeps no data may own one.
  if (host.createNamespace === true && raw.retainData !== false) {
    out.push(problem(["host", "createNamespace"], "would let pulumi destroy delete the chain data with the namespace: create the namespace yourself (kubectl create namespace), or set rpcstack:retainData to false"));
  }
  if (isObj(raw.hosts) && Object.keys(raw.hosts).length) {
    out.push(problem(["hosts"], "does not apply with rpcstack:host.kind kubernetes: the cluster places the nodes (list several in rpcstack:nodes and they spread over its machines)"));
  }
  if (isObj(raw.monitoring) && raw.monitoring.enabled === true) {
    out.push(problem(["monitoring", "enabled"], "does not apply on kubernetes: the Services carry prometheus.io scrape annotations for the cluster's own Prometheus"));
  }
  if (gw.domain !== undefined && host.tlsSecret === undefined) {
    out.push(problem(["host", "tlsSecret"], "is required with rpcstack:gateway.domain on kubernetes: a kubernetes.io/tls Secret in the namespace with its certificate (cert-manager makes one); no ACME client runs in the cluster"));
  }
  if (gw.domain === undefined && host.tlsSecret !== undefined) {
    out.push(problem(["host", "tlsSecret"], "needs rpcstack:gateway.domain, the name its certificate is for"));
  }
  if (gw.acmeEmail !== undefined) {
    out.push(problem(["gateway", "acmeEmail"], "does not apply on kubernetes: the certificate comes from rpcstack:host.tlsSecret"));
  }
  if (expose.nodePort !== undefined && exposeKind !== "NodePort") {
    out.push(problem(["host", "expose", "nodePort"], `applies only with rpcstack:host.expose.kind NodePort (it is ${String(exposeKind)})`));
  }
  if (expose.ingressClass !== undefined && exposeKind !== "Ingress") {
    out.push(problem(["host", "expose", "ingressClass"], `applies only with rpcstack:host.expose.kind Ingress (it is ${String(exposeKind)})`));
  }
  if (exposeKind === "Ingress" && gw.domain === undefined) {
    out.push(problem(["host", "expose", "kind"], "Ingress routes by hostname: it needs rpcstack:gateway.domain"));
  }
  return out;
}
