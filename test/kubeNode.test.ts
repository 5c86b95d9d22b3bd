/**
 * Pods that run, on the one-node cluster of test/support/kubeNode.ts (a real kubelet, containerd,
 * runc, kube-proxy and kube-scheduler): a Deployment's pod turns Ready by its readiness probe, a
 * NodePort Service answers on 127.0.0.1 and another pod reaches it by its cluster IP (its output
 * read through the API server and the kubelet), a StatefulSet's claim binds to a local volume and
 * what one pod wrote there is read by the pod that replaces it, and an image from Docker runs as a
 * pod.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineMissing, run } from "../devtools/docker.js";
import { describeNotRun } from "./e2e/notRun.js";
import type { KubeObject } from "./support/kubeCluster.js";
import { BUSYBOX_IMAGE, busyboxRootfs, startKubeNode, STORAGE_CLASS, type KubeNode } from "./support/kubeNode.js";
import { waitFor } from "./support/net.js";

const NS = "rpcstack-node-test";
let node: KubeNode | undefined;
// The first run on a machine builds the binaries (scripts/kubernetes/build.sh): about ten minutes.
beforeAll(async () => {
  node = await startKubeNode();
  console.log(`one-node cluster ready in ${(node.readyMs / 1000).toFixed(1)} s`);
  await node.cluster.create("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
}, 30 * 60_000);
afterAll(() => node?.stop(), 180_000);
const kube = () => node!.cluster;

interface Pod extends KubeObject {
  status: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string; lastTransitionTime: string }[];
    containerStatuses?: { ready: boolean; restartCount: number; state: { running?: { startedAt: string } } }[];
  };
}
const ready = (p: Pod) => p.status.phase === "Running" && !!p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True");

/** The one pod with these labels that is Running and Ready (and not `not`), with what the kubelet said if none comes. */
async function readyPod(selector: string, not?: string, timeoutMs = 120_000): Promise<Pod> {
  const t0 = Date.now();
  try {
    const pod = await waitFor(`a Ready pod ${selector}`, async () => {
      const pods = (await kube().list<Pod>(`/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(selector)}`)).filter((p) => p.metadata.uid !== not);
      return pods.length === 1 && ready(pods[0]) ? pods[0] : undefined;
    }, timeoutMs);
    console.log(`pod ${pod.metadata.name} Ready ${((Date.now() - t0) / 1000).toFixed(1)} s after asked`);
    return pod;
  } catch (e) {
    const pods = await kube().list<Pod>(`/api/v1/namespaces/${NS}/pods`).catch(() => []);
    // What the containers printed, through the API server and the kubelet: a text body, which the
    // harness's client hands back as `message`.
    const printed = await Promise.all(pods.map(async (p) => {
      const log = await kube().get<{ message?: string }>(`/api/v1/namespaces/${NS}/pods/${p.metadata.name}/log?previous=true`).catch((x) => ({ message: String(x) }));
      return `${p.metadata.name} printed: ${log.message ?? JSON.stringify(log)}`;
    }));
    throw new Error(`${(e as Error).message}\npods: ${JSON.stringify(pods.map((p) => ({ name: p.metadata.name, status: p.status })), null, 1)}\n${printed.join("\n")}\n${node!.logs().slice(-6000)}`);
  }
}

const get = async (url: string) => {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: (await res.text()).trim() };
};

/** A busybox container serving `dir` over HTTP on 8080, after `setup` ran in sh. */
const httpContainer = (image: string, setup: string, dir: string) => ({
  name: "web",
  image,
  imagePullPolicy: "Never",
  command: ["sh", "-c", `${setup}\nexec httpd -f -p 8080 -h ${dir}`],
  ports: [{ name: "http", containerPort: 8080 }],
});

describe("a one-node cluster with a real kubelet", () => {
  it("runs a Deployment's pod, which turns Ready only when its readiness probe answers", { timeout: 180_000 }, async () => {
    await kube().create(`/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{
              // /ready appears 3 s after the server starts: the pod may not be Ready before.
              ...httpContainer(BUSYBOX_IMAGE, "mkdir -p /www && hostname > /www/index.html\n(sleep 3; echo ok > /www/ready) &", "/www"),
              readinessProbe: { httpGet: { path: "/ready", port: "http" }, periodSeconds: 1 },
            }],
          },
        },
      },
    });
    const pod = await readyPod("app=web");
    expect(pod.status.containerStatuses?.[0]).toMatchObject({ ready: true, restartCount: 0 });
    expect(await get(`http://${pod.status.podIP}:8080/ready`)).toEqual({ status: 200, body: "ok" });
    const started = Date.parse(pod.status.containerStatuses![0].state.running!.startedAt);
    const readySince = Date.parse(pod.status.conditions!.find((c) => c.type === "Ready")!.lastTransitionTime);
    // Both in whole seconds: 3 s of sleep leave at least 2 between them.
    expect(readySince - started).toBeGreaterThanOrEqual(2_000);
  });

  it("answers a NodePort Service on 127.0.0.1 from the Deployment's pod", { timeout: 60_000 }, async () => {
    const svc = await kube().create<KubeObject>(`/api/v1/namespaces/${NS}/services`, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: NS },
      spec: { type: "NodePort", selector: { app: "web" }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
    });
    const nodePort: number = svc.spec.ports[0].nodePort;
    expect(nodePort).toBeGreaterThanOrEqual(30000);
    const [pod] = await kube().list<Pod>(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
    // kube-proxy writes the Service's rules a moment after it is made.
    const answer = await waitFor(`127.0.0.1:${nodePort}`, () => get(`http://127.0.0.1:${nodePort}/`), 30_000);
    expect(answer).toEqual({ status: 200, body: pod.metadata.name });
    const clusterIp: string = svc.spec.clusterIP;
    expect(await get(`http://${clusterIp}/`)).toEqual({ status: 200, body: pod.metadata.name });
  });

  it("lets another pod reach the Deployment's pod through the Service's cluster IP", { timeout: 120_000 }, async () => {
    const svc = await kube().get(`/api/v1/namespaces/${NS}/services/web`);
    const [web] = await kube().list<Pod>(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
    await kube().create(`/api/v1/namespaces/${NS}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "caller", namespace: NS },
      spec: {
        restartPolicy: "Never",
        // nc, not wget: Debian's busybox 1.35 wget dies of a segmentation fault before it connects.
        containers: [{ name: "caller", image: BUSYBOX_IMAGE, imagePullPolicy: "Never", command: ["sh", "-c", `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 10 ${svc.spec.clusterIP} 80`] }],
      },
    });
    const done = await waitFor("the caller pod to end", async () => {
      const p = await kube().get<Pod>(`/api/v1/namespaces/${NS}/pods/caller`);
      return p.status.phase === "Succeeded" || p.status.phase === "Failed" ? p : undefined;
    }, 90_000);
    const printed = (await kube().get<{ message: string }>(`/api/v1/namespaces/${NS}/pods/caller/log`)).message;
    // The container log keeps lines, not the answer's CR LF: the status line, the headers, an empty line, the body.
    const lines = printed.split("\n").map((l) => l.replace(/\r$/, ""));
    const body = lines.slice(lines.indexOf("") + 1).join("\n").trim();
    expect({ phase: done.status.phase, status: lines[0], body }).toEqual({ phase: "Succeeded", status: "HTTP/1.1 200 OK", body: web.metadata.name });
  });

  it("binds a StatefulSet's claim to a local volume, and the pod that replaces a deleted one reads what it wrote", { timeout: 300_000 }, async () => {
    await kube().create(`/api/v1/namespaces/${NS}/services`, {
      apiVersion: "v1", kind: "Service", metadata: { name: "keeper", namespace: NS },
      spec: { clusterIP: "None", selector: { app: "keeper" }, ports: [{ name: "http", port: 8080 }] },
    });
    await kube().create(`/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "keeper", namespace: NS },
      spec: {
        serviceName: "keeper",
        replicas: 1,
        selector: { matchLabels: { app: "keeper" } },
        template: {
          metadata: { labels: { app: "keeper" } },
          spec: {
            terminationGracePeriodSeconds: 1,
            containers: [{
              // The first pod leaves its UID in /data/mark; every pod adds its own to /data/starts.
              ...httpContainer(BUSYBOX_IMAGE, '[ -f /data/mark ] || echo "$POD_UID" > /data/mark; echo "$POD_UID" >> /data/starts', "/data"),
              env: [{ name: "POD_UID", valueFrom: { fieldRef: { fieldPath: "metadata.uid" } } }],
              readinessProbe: { httpGet: { path: "/mark", port: "http" }, periodSeconds: 1 },
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            }],
          },
        },
        // No storageClassName: the cluster's default class.
        volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }],
      },
    });
    const first = await readyPod("app=keeper");
    expect(first.status.containerStatuses?.[0].restartCount).toBe(0);
    const claim = await kube().get(`/api/v1/namespaces/${NS}/persistentvolumeclaims/data-keeper-0`);
    expect(claim.status.phase).toBe("Bound");
    expect(claim.spec.storageClassName).toBe(STORAGE_CLASS);
    expect(node!.volumes).toContain(claim.spec.volumeName);
    const uid1 = first.metadata.uid!;
    expect(await get(`http://${first.status.podIP}:8080/mark`)).toEqual({ status: 200, body: uid1 });

    await kube().delete(`/api/v1/namespaces/${NS}/pods/keeper-0`);
    const second = await readyPod("app=keeper", uid1);
    const uid2 = second.metadata.uid!;
    expect(second.status.containerStatuses?.[0].restartCount).toBe(0);
    expect(uid2).not.toBe(uid1);
    expect(await get(`http://${second.status.podIP}:8080/mark`)).toEqual({ status: 200, body: uid1 });
    expect(await get(`http://${second.status.podIP}:8080/starts`)).toEqual({ status: 200, body: `${uid1}\n${uid2}` });
    // On the volume's own directory on the host, not in a container's file system.
    const pv = await kube().get(`/api/v1/persistentvolumes/${claim.spec.volumeName}`);
    expect(readFileSync(join(pv.spec.local.path, "mark"), "utf8").trim()).toBe(uid1);
  });
});

const missing = engineMissing();
if (missing) {
  describeNotRun("a Docker image run as a pod on the one-node cluster", missing);
} else {
  describe("an image from the Docker daemon", () => {
    const tag = `rpcstack-kubenode/busybox:${process.pid}`;
    afterAll(() => void run("docker", ["image", "rm", "-f", tag]));

    it("is imported into containerd and runs as a pod", { timeout: 180_000 }, async () => {
      const root = busyboxRootfs(mkdtempSync(join(tmpdir(), "rpcstack-kubenode-image-")));
      try {
        execFileSync("docker", ["import", "--change", "ENV PATH=/bin", "-", tag], { input: execFileSync("tar", ["-C", root, "-c", "."], { maxBuffer: 64 << 20 }), stdio: ["pipe", "pipe", "pipe"] });
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
      node!.importImage(tag);
      await kube().create(`/api/v1/namespaces/${NS}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "from-docker", namespace: NS, labels: { app: "from-docker" } },
        spec: { terminationGracePeriodSeconds: 1, containers: [httpContainer(tag, "mkdir -p /www && echo docker > /www/index.html", "/www")] },
      });
      const pod = await readyPod("app=from-docker");
      expect(await waitFor("the pod's server", () => get(`http://${pod.status.podIP}:8080/`))).toEqual({ status: 200, body: "docker" });
    });
  });
}
