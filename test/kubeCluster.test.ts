/**
 * The Kubernetes harness (test/support/kubeCluster.ts) on a real API server: the kinds the stack
 * renders are validated and stored by kube-apiserver itself, a field it refuses comes back with its
 * own message, and the controller manager makes a StatefulSet's claim. No kubelet: no pod runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeApiError, startKubeCluster, type KubeCluster, type KubeObject } from "./support/kubeCluster.js";
import { waitFor } from "./support/net.js";

const NS = "rpcstack-test";
const labels = { app: "node" };
let cluster: KubeCluster | undefined;
// The first run on a machine builds the binaries (scripts/kubernetes/build.sh): minutes.
beforeAll(async () => void (cluster = await startKubeCluster()), 30 * 60_000);
afterAll(() => cluster?.stop());
const kube = () => cluster!;

const statefulSet: KubeObject = {
  apiVersion: "apps/v1",
  kind: "StatefulSet",
  metadata: { name: "node", namespace: NS },
  spec: {
    serviceName: "node",
    replicas: 1,
    selector: { matchLabels: labels },
    template: {
      metadata: { labels },
      spec: {
        containers: [{
          name: "node",
          image: "example.invalid/node:1.0.0",
          ports: [{ name: "rpc", containerPort: 8545 }],
          readinessProbe: { httpGet: { path: "/ready", port: "rpc" }, periodSeconds: 10 },
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        }],
      },
    },
    volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }],
  },
};
const service = (port: number): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: port > 65535 ? "bad-port" : "node", namespace: NS },
  spec: { selector: labels, ports: [{ name: "rpc", port, targetPort: "rpc" }] },
});

describe("a real kube-apiserver on loopback", () => {
  it("accepts and stores a namespace, a config map, a stateful set with a claim template and a readiness probe, a service and a disruption budget", async () => {
    const c = kube();
    await c.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
    await c.create(`/api/v1/namespaces/${NS}/configmaps`, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "gateway", namespace: NS }, data: { "haproxy.cfg": "global\n" } } as KubeObject);
    await c.create(`/apis/apps/v1/namespaces/${NS}/statefulsets`, statefulSet);
    await c.create(`/api/v1/namespaces/${NS}/services`, service(8545));
    await c.create(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
      apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name: "node", namespace: NS }, spec: { minAvailable: 1, selector: { matchLabels: labels } },
    });

    expect((await c.get<{ data: Record<string, string> }>(`/api/v1/namespaces/${NS}/configmaps/gateway`)).data).toEqual({ "haproxy.cfg": "global\n" });
    const sts = await c.get(`/apis/apps/v1/namespaces/${NS}/statefulsets/node`);
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("1Gi");
    // Stored as the API server completes it: its defaults are there.
    expect(sts.spec.template.spec.containers[0].readinessProbe).toMatchObject({ httpGet: { path: "/ready", port: "rpc", scheme: "HTTP" }, periodSeconds: 10, failureThreshold: 3 });
    expect(sts.spec.podManagementPolicy).toBe("OrderedReady");
    const svc = await c.get(`/api/v1/namespaces/${NS}/services/node`);
    expect(svc.spec).toMatchObject({ type: "ClusterIP", ports: [{ port: 8545, protocol: "TCP" }] });
    expect(svc.spec.clusterIP).toMatch(/^10\.96\./);
    expect((await c.list(`/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`)).map((p) => p.metadata.name)).toEqual(["node"]);
  });

  it("refuses a Service port of 70000 with the API server's own message, and stores nothing", async () => {
    const c = kube();
    const refused = await c.create(`/api/v1/namespaces/${NS}/services`, service(70000)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect(refused).toMatchObject({ status: 422, reason: "Invalid" });
    expect((refused as Error).message).toMatch(/Service "bad-port" is invalid: spec\.ports\[0\]\.port: Invalid value: 70000: must be between 1 and 65535, inclusive/);
    expect((await c.list(`/api/v1/namespaces/${NS}/services`)).map((s) => s.metadata.name)).toEqual(["node"]);
  });

  it("the statefulset controller creates the StatefulSet's claim from its template", async () => {
    const c = kube();
    const claim = await waitFor("the claim data-node-0", async () =>
      (await c.list(`/api/v1/namespaces/${NS}/persistentvolumeclaims`)).find((p) => p.metadata.name === "data-node-0"),
    );
    expect(claim.spec.resources.requests.storage).toBe("1Gi");
    expect(claim.metadata.labels).toMatchObject(labels);
  });
});
