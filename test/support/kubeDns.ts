/**
 * The one-node cluster's DNS: CoreDNS deployed as kubeadm deploys it (its service account and
 * ClusterRole, its Corefile in a ConfigMap, the Service kube-dns), answering NXDOMAIN for every
 * name outside the cluster's zones since nothing upstream is reachable here.
 */
import { Resolver } from "node:dns/promises";
import type { KubeCluster, KubeObject } from "./kubeCluster.js";
import { waitFor } from "./net.js";

/** CoreDNS, a static binary at /coredns. */
export const COREDNS_IMAGE = "rpcstack.local/coredns:1.14.6";
/** The cluster DNS Service's cluster IP (kubeadm's choice, the tenth of the Service range) and the cluster's domain. */
export const CLUSTER_DNS_IP = "10.96.0.10";
export const CLUSTER_DOMAIN = "cluster.local";

/**
 * CoreDNS's configuration: kubeadm's Corefile (v1.37) without `forward`, `loop` and `reload`, which
 * need an upstream or a change to watch, and without `prometheus`. The cluster's zones have a server
 * block of their own; every other name reaches the catch-all block, whose template answers NXDOMAIN
 * (a `.` block with the kubernetes plugin alone would answer SERVFAIL, which glibc reports as a
 * temporary failure). Cluster names are not cached, so a Service resolves as soon as it exists.
 */
const COREFILE = `${CLUSTER_DOMAIN}:53 in-addr.arpa:53 ip6.arpa:53 {
    errors
    health {
        lameduck 5s
    }
    ready
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        pods insecure
        ttl 30
    }
    cache 30 {
        disable success ${CLUSTER_DOMAIN}
        disable denial ${CLUSTER_DOMAIN}
    }
    loadbalance
}
.:53 {
    errors
    template ANY ANY {
        rcode NXDOMAIN
    }
}
`;

/**
 * The cluster DNS as kubeadm v1.37 deploys it (cmd/kubeadm/app/phases/addons/dns/manifests.go: the
 * service account, ClusterRole and binding `system:coredns`, the ConfigMap, Deployment and Service),
 * with the image packed here, never pulled, and a readiness probe every second instead of every ten.
 * Resolves with how long it took until the Service answered for the `kubernetes` Service's name.
 */
export async function startClusterDns(cluster: KubeCluster, exited: Promise<never>): Promise<number> {
  const t0 = Date.now();
  const ns = "kube-system";
  const labels = { "k8s-app": "kube-dns" };
  await cluster.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: ns } });
  await cluster.create("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: "system:coredns" },
    rules: [
      { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
    ],
  } as KubeObject);
  await cluster.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "system:coredns" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
    subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: ns }],
  } as KubeObject);
  await cluster.create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "coredns", namespace: ns }, data: { Corefile: COREFILE } } as KubeObject);
  await cluster.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "coredns", namespace: ns, labels },
    spec: {
      replicas: 1,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          priorityClassName: "system-cluster-critical",
          serviceAccountName: "coredns",
          // The host's resolv.conf: CoreDNS does not ask itself.
          dnsPolicy: "Default",
          nodeSelector: { "kubernetes.io/os": "linux" },
          containers: [{
            name: "coredns",
            image: COREDNS_IMAGE,
            imagePullPolicy: "Never",
            args: ["-conf", "/etc/coredns/Corefile"],
            resources: { limits: { memory: "170Mi" }, requests: { cpu: "100m", memory: "70Mi" } },
            volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
            ports: [
              { containerPort: 53, name: "dns", protocol: "UDP" },
              { containerPort: 53, name: "dns-tcp", protocol: "TCP" },
              { containerPort: 8080, name: "liveness-probe", protocol: "TCP" },
              { containerPort: 8181, name: "readiness-probe", protocol: "TCP" },
            ],
            livenessProbe: { httpGet: { path: "/health", port: "liveness-probe" }, initialDelaySeconds: 60, timeoutSeconds: 5, failureThreshold: 5 },
            // `ready` answers 200 once the kubernetes plugin has listed the API's Services and slices.
            readinessProbe: { httpGet: { path: "/ready", port: "readiness-probe" }, periodSeconds: 1 },
            securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] }, readOnlyRootFilesystem: true },
          }],
          volumes: [{ name: "config-volume", configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] } }],
        },
      },
    },
  });
  await cluster.create(`/api/v1/namespaces/${ns}/services`, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "kube-dns", namespace: ns, labels: { ...labels, "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS" } },
    spec: {
      clusterIP: CLUSTER_DNS_IP,
      selector: labels,
      ports: [{ name: "dns", port: 53, protocol: "UDP", targetPort: 53 }, { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 }],
    },
  });

  // Ready when the Service answers (the pod Ready, its endpoint published, kube-proxy's rules
  // written), asked from the host as a pod would ask, for a name only the API server knows.
  const api: string = (await cluster.get("/api/v1/namespaces/default/services/kubernetes")).spec.clusterIP;
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([CLUSTER_DNS_IP]);
  try {
    await Promise.race([exited, waitFor("the cluster DNS (Service kube-dns) to answer", async () => {
      const a = await resolver.resolve4(`kubernetes.default.svc.${CLUSTER_DOMAIN}`);
      return a.length === 1 && a[0] === api ? true : undefined;
    }, 120_000)]);
  } catch (e) {
    const pods = await cluster.list(`/api/v1/namespaces/${ns}/pods?labelSelector=k8s-app%3Dkube-dns`).catch(() => []);
    const printed = await Promise.all(pods.map((p) => cluster.get<{ message?: string }>(`/api/v1/namespaces/${ns}/pods/${p.metadata.name}/log`)
      .then((l) => `${p.metadata.name} printed: ${l.message ?? JSON.stringify(l)}`, (x) => `${p.metadata.name}: ${x}`)));
    throw new Error(`${(e as Error).message}
CoreDNS pods: ${JSON.stringify(pods.map((p) => ({ name: p.metadata.name, status: p.status })))}
${printed.join("\n")}`);
  }
  return Date.now() - t0;
}
