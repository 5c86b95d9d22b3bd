/**
 * Pods that run, on the one-node cluster of test/support/kubeNode.ts (a real kubelet, containerd,
 * runc, kube-proxy and kube-scheduler): a Deployment's pod turns Ready by its readiness probe, a
 * NodePort Service answers on 127.0.0.1 and another pod reaches it by its cluster IP (its output
 * read through the API server and the kubelet), a StatefulSet's claim binds to a local volume and
 * what one pod wrote there is read by the pod that replaces it, a pod resolves a Service by its name
 * through the cluster DNS (CoreDNS, which reads the API server from its own pod) and calls it, and
 * an image from Docker runs as a pod.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { Resolver } from "node:dns/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineMissing, run } from "../devtools/docker.js";
import { describeNotRun } from "./e2e/notRun.js";
import type { KubeObject } from "./support/kubeCluster.js";
import { BUSYBOX_IMAGE, busyboxRootfs, CLUSTER_DNS_IP, CLUSTER_DOMAIN, startKubeNode, STORAGE_CLASS, type KubeNode } from "./support/kubeNode.js";
import { waitFor } from "./support/net.js";

const NS = "rpcstack-node-test";
let node: KubeNode | undefined;
// The first run on a machine builds the binaries (scripts/kubernetes/build.sh): about ten minutes.
beforeAll(async () => {
  node = await startKubeNode();
  console.log(`one-node cluster ready in ${(node.readyMs / 1000).toFixed(1)} s (its DNS answered ${(node.dnsReadyMs / 1000).toFixed(1)} s after CoreDNS's objects were made)`);
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

/** Runs `script` in sh in a busybox pod until it ends; its phase and what it printed (stdout and stderr, by line). */
async function runPod(name: string, script: string): Promise<{ phase: string; lines: string[] }> {
  await kube().create(`/api/v1/namespaces/${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS },
    spec: { restartPolicy: "Never", containers: [{ name, image: BUSYBOX_IMAGE, imagePullPolicy: "Never", command: ["sh", "-c", script] }] },
  });
  const done = await waitFor(`the pod ${name} to end`, async () => {
    const p = await kube().get<Pod>(`/api/v1/namespaces/${NS}/pods/${name}`);
    return p.status.phase === "Succeeded" || p.status.phase === "Failed" ? p : undefined;
  }, 90_000);
  const printed = (await kube().get<{ message: string }>(`/api/v1/namespaces/${NS}/pods/${name}/log`)).message;
  // The container log keeps lines, not an HTTP answer's CR LF.
  return { phase: done.status.phase!, lines: printed.split("\n").map((l) => l.replace(/\r$/, "")) };
}

/** An HTTP/1.0 GET of / by nc: not wget, whose Debian busybox 1.35 build dies of a segmentation fault before it connects. */
const ncGet = (host: string, port: number) => `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 10 ${host} ${port}`;
/** The status line and body of an answer printed as `lines` from `from` on: the status line, the headers, an empty line, the body. */
const httpAnswer = (lines: string[], from = 0) => {
  const answer = lines.slice(from);
  return { status: answer[0], body: answer.slice(answer.indexOf("") + 1).join("\n").trim() };
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
    const { phase, lines } = await runPod("caller", ncGet(svc.spec.clusterIP, 80));
    expect({ phase, ...httpAnswer(lines) }).toEqual({ phase: "Succeeded", status: "HTTP/1.1 200 OK", body: web.metadata.name });
  });

  it("resolves a Service by its short name and its FQDN in a pod and calls it by name; an unknown name fails at once", { timeout: 120_000 }, async () => {
    const svc = await kube().get(`/api/v1/namespaces/${NS}/services/web`);
    const [web] = await kube().list<Pod>(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dweb`);
    const fqdn = `web.${NS}.svc.${CLUSTER_DOMAIN}`;

    // The Service kube-dns asked from the host: an answer, and NXDOMAIN (c-ares's ENOTFOUND; not
    // SERVFAIL or a timeout) for an unknown name in the cluster's domain and outside it.
    const resolver = new Resolver({ timeout: 2_000, tries: 1 });
    resolver.setServers([CLUSTER_DNS_IP]);
    expect(await resolver.resolve4(fqdn)).toEqual([svc.spec.clusterIP]);
    for (const name of [`nosuch.${NS}.svc.${CLUSTER_DOMAIN}`, "nosuch.example"]) {
      await expect(resolver.resolve4(name), name).rejects.toMatchObject({ code: "ENOTFOUND" });
    }

    // In a pod, through glibc (getaddrinfo) with the resolv.conf the kubelet wrote, as the gateway
    // resolves the node Services: each search domain is asked in turn for a short name.
    const { phase, lines } = await runPod("resolver", [
      "sed 's/^/resolv.conf: /' /etc/resolv.conf",
      `for n in web ${fqdn}; do echo "ahostsv4 $n: $(getent ahostsv4 $n | head -n 1)"; done`,
      // time's report on stdout: the pod log interleaves its two streams in no fixed order.
      "time getent ahostsv4 nosuch-rpcstack 2>&1; echo \"unknown: exit $?\"",
      "echo '--- http'",
      ncGet("web", 80),
    ].join("\n"));
    const text = lines.join("\n");
    expect(lines).toEqual(expect.arrayContaining([
      `resolv.conf: search ${NS}.svc.${CLUSTER_DOMAIN} svc.${CLUSTER_DOMAIN} ${CLUSTER_DOMAIN}`,
      `resolv.conf: nameserver ${CLUSTER_DNS_IP}`,
      "resolv.conf: options ndots:5",
    ]));
    // getent prints the address, the socket type and the canonical name.
    const esc = (t: string) => t.replaceAll(".", "\\.");
    for (const name of ["web", fqdn]) expect(text, text).toMatch(new RegExp(`^ahostsv4 ${esc(name)}: ${esc(svc.spec.clusterIP)}\\s+STREAM ${esc(fqdn)}$`, "m"));
    // getent's exit status 2: not found; busybox's time prints "real\t0m 0.01s". A lost query
    // would cost glibc's 5 s timeout.
    expect(text, text).toMatch(/^unknown: exit 2$/m);
    const [real, min, sec] = /^real\s+(\d+)m\s*([\d.]+)s$/m.exec(text) ?? [];
    console.log(`an unknown name failed in a pod (each search domain asked, then the name alone): time printed "${real}"`);
    expect((Number(min) * 60 + Number(sec)) * 1000).toBeLessThan(2_000);
    expect({ phase, ...httpAnswer(lines, lines.indexOf("--- http") + 1) }).toEqual({ phase: "Succeeded", status: "HTTP/1.1 200 OK", body: web.metadata.name });
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
      node!.importImages([tag]);
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
