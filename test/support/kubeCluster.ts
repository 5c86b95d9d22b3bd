/**
 * A real Kubernetes control plane on loopback, built from the Go module proxy by
 * scripts/kubernetes/build.sh: etcd, kube-apiserver and kube-controller-manager (its statefulset
 * controller creates a StatefulSet's claims, its garbage collector and namespace controller delete
 * what is deleted). Alone there is no kubelet and no scheduler: pods are stored, never run. With
 * `node`, it is the control plane of test/support/kubeNode.ts, which adds them, and the API server
 * listens on the node's IP.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { cachedBuild } from "../../devtools/clients.js";
import { freePort, start, waitFor, type Child } from "./net.js";

/** The Services' cluster IPs; a node's kube-proxy routes them (docs: test/support/kubeNode.ts). */
export const SERVICE_CIDR = "10.96.0.0/16";

export type KubeBinary =
  | "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler" | "kubelet" | "kube-proxy"
  | "containerd" | "containerd-shim-runc-v2" | "ctr" | "pause" | "coredns";

/** The binary from the build script's cache, built first when missing (minutes, once per machine). */
export const kubeBinary = (name: KubeBinary): string => cachedBuild("scripts/kubernetes/build.sh", name);

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
  spec?: any;
  status?: any;
}

/** A request the API server refused: its HTTP status, its Status reason and its own message. */
export class KubeApiError extends Error {
  constructor(readonly status: number, readonly reason: string, message: string) {
    super(message);
  }
}

export interface KubeCluster {
  /** For @pulumi/kubernetes's Provider `kubeconfig` (it holds the admin token: pass it as a secret). */
  readonly kubeconfig: string;
  readonly server: string;
  readonly controllers: boolean;
  get<T = KubeObject>(path: string): Promise<T>;
  list<T = KubeObject>(path: string): Promise<T[]>;
  create<T extends KubeObject>(path: string, body: T): Promise<T>;
  /** A JSON merge patch (RFC 7386). */
  patch<T = KubeObject>(path: string, body: unknown): Promise<T>;
  delete(path: string): Promise<unknown>;
  /** A kubeconfig for one of the node's components (only with `node`). */
  kubeconfigFor(user: NodeUser): string;
  /** What each process printed, for a failing test's message. */
  logs(): string;
  stop(): Promise<void>;
}

/** Who, besides the admin, a control plane started with `node` knows: each has a token of its own. */
export type NodeUser = "kubelet" | "kube-scheduler" | "kube-proxy";

/** What a kubelet, a scheduler and kube-proxy on this machine need of the control plane. */
export interface NodeAccess {
  /** The Node object's name: the kubelet is `system:node:<name>`, which the Node authorizer and NodeRestriction check. */
  nodeName: string;
  /**
   * The node's IP, on an interface that exists already: the API server listens there instead of on
   * loopback and publishes it as the `kubernetes` Service's endpoint (its own lease reconciler, as on
   * a real cluster), so that pods reach the API at the Service's cluster IP.
   */
  address: string;
  /** Files of the certificate and key the API server presents to the kubelet (logs, port-forward), from a CA the kubelet trusts. */
  kubeletClient: { cert: string; key: string };
}

/** The kubeconfig file format (clientcmd v1), with one cluster, user and context. */
interface Kubeconfig {
  apiVersion: "v1";
  kind: "Config";
  clusters: { name: string; cluster: { server: string; "certificate-authority-data": string } }[];
  users: { name: string; user: { token: string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  "current-context": string;
}

const kubeconfigFor = (server: string, ca: string, token: string, user = "rpcstack-admin"): string => {
  const config: Kubeconfig = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "rpcstack-test", cluster: { server, "certificate-authority-data": Buffer.from(ca).toString("base64") } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: "rpcstack-test", context: { cluster: "rpcstack-test", user } }],
    "current-context": "rpcstack-test",
  };
  return stringify(config);
};

/** One HTTPS call to the API server, the server certificate checked against `ca`. */
function call(server: string, ca: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const type = method === "PATCH" ? "application/merge-patch+json" : "application/json";
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server), { method, ca, headers: { Authorization: `Bearer ${token}`, Accept: "application/json", "Content-Type": type } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        try {
          resolve({ status: res.statusCode!, json: JSON.parse(text) });
        } catch {
          resolve({ status: res.statusCode!, json: { message: text } });
        }
      });
    });
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * Starts etcd, kube-apiserver and (when `controllers`) kube-controller-manager on free loopback
 * ports, everything in a temp dir; resolves once the API server answers /readyz. A start that fails
 * midway stops what it started and removes the dir before it throws. With `node`, the API server
 * listens on the node's address instead (etcd stays on loopback), authorizes a kubelet as a real
 * cluster does (Node authorizer, NodeRestriction) and every default controller runs.
 */
export async function startKubeCluster(opts: { controllers?: boolean; node?: NodeAccess } = {}): Promise<KubeCluster> {
  const controllers = opts.controllers ?? true;
  const node = opts.node;
  const bins = { etcd: kubeBinary("etcd"), apiserver: kubeBinary("kube-apiserver"), kcm: controllers ? kubeBinary("kube-controller-manager") : "" };
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-kube-"));
  const children: Child[] = [];
  const logs = () => children.map((c) => c.output()).join("\n");
  let stopping = false;
  let died!: (e: Error) => void;
  // Rejects when a process ends before stop(): a start then fails at once, with what it printed.
  const exited = new Promise<never>((_, reject) => (died = reject));
  exited.catch(() => {});
  const run = (name: string, bin: string, args: string[]) => {
    const child = start(bin, args);
    child.proc.once("close", (code, signal) => stopping || died(new Error(`${name} exited (${code ?? signal}):\n${child.output().slice(-3000)}`)));
    children.push(child);
  };
  const stop = async () => {
    stopping = true;
    for (const c of [...children].reverse()) await c.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [etcdPort, peerPort, apiPort, kcmPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const token = randomBytes(24).toString("hex");
    // The names and groups the API server's bootstrap roles and the Node authorizer grant to.
    const nodeUsers: Record<NodeUser, { name: string; groups: string; token: string }> | undefined = node && {
      kubelet: { name: `system:node:${node.nodeName}`, groups: "system:nodes", token: randomBytes(24).toString("hex") },
      "kube-scheduler": { name: "system:kube-scheduler", groups: "", token: randomBytes(24).toString("hex") },
      "kube-proxy": { name: "system:kube-proxy", groups: "", token: randomBytes(24).toString("hex") },
    };
    // system:masters passes every authorization check, so RBAC can stay on as on a real cluster.
    const tokenLines = [`${token},rpcstack-admin,rpcstack-admin,"system:masters"`, ...Object.values(nodeUsers ?? {}).map((u) => `${u.token},${u.name},${u.name}${u.groups ? `,"${u.groups}"` : ""}`)];
    writeFileSync(join(dir, "tokens.csv"), tokenLines.join("\n") + "\n", { mode: 0o600 });
    const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    writeFileSync(join(dir, "sa.key"), sa.privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
    writeFileSync(join(dir, "sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    run("etcd", bins.etcd, [
        `--data-dir=${join(dir, "etcd")}`, "--name=rpcstack", `--listen-client-urls=${etcdUrl}`, `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`, `--initial-advertise-peer-urls=${peerUrl}`, `--initial-cluster=rpcstack=${peerUrl}`,
        // The data dies with the test: no fsync, so a run on a busy disk stays quick.
        "--unsafe-no-fsync", "--log-level=warn",
    ]);

    const address = node?.address ?? "127.0.0.1";
    const server = `https://${address}:${apiPort}`;
    mkdirSync(join(dir, "pki"));
    run("kube-apiserver", bins.apiserver, [
        `--etcd-servers=${etcdUrl}`, `--bind-address=${address}`, `--advertise-address=${address}`, `--secure-port=${apiPort}`,
        // The API server makes its own serving certificate (with its CA) here, for its address and
        // the `kubernetes` Service's (10.96.0.1, kubernetes.default.svc).
        `--cert-dir=${join(dir, "pki")}`, `--token-auth-file=${join(dir, "tokens.csv")}`,
        ...(node
          ? ["--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
              `--kubelet-client-certificate=${node.kubeletClient.cert}`, `--kubelet-client-key=${node.kubeletClient.key}`,
              // The node's only address the API server can reach is the CNI bridge's.
              "--kubelet-preferred-address-types=InternalIP"]
          : ["--authorization-mode=RBAC"]),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${join(dir, "sa.pub")}`, `--service-account-signing-key-file=${join(dir, "sa.key")}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`, "--enable-priority-and-fairness=false",
        // A loopback address cannot be published as the kubernetes Service's endpoint; a node's can.
        ...(node ? [] : ["--endpoint-reconciler-type=none"]),
    ]);
    // Taken only once the file is whole: read between its creation and its write it is empty, and
    // an empty CA made every /readyz probe fail with "self-signed certificate in certificate chain"
    // for the whole wait (CI, 2026-11-30, the kubelet and cluster tests at once).
    const ca = await Promise.race([exited, waitFor("kube-apiserver's serving certificate", async () => {
      try {
        const pem = readFileSync(join(dir, "pki/apiserver.crt"), "utf8");
        return pem.trimEnd().endsWith("-----END CERTIFICATE-----") ? pem : undefined;
      } catch {
        return undefined;
      }
    })]);
    await Promise.race([exited, waitFor("kube-apiserver /readyz", async () => ((await call(server, ca, token, "GET", "/readyz")).status === 200 ? true : undefined), 90_000)]);
    const kubeconfig = kubeconfigFor(server, ca, token);

    if (controllers) {
      writeFileSync(join(dir, "kcm.kubeconfig"), kubeconfig, { mode: 0o600 });
      run("kube-controller-manager", bins.kcm, [
          `--kubeconfig=${join(dir, "kcm.kubeconfig")}`, "--bind-address=127.0.0.1", `--secure-port=${kcmPort}`, `--cert-dir=${join(dir, "kcm")}`,
          "--leader-elect=false", "--use-service-account-credentials=false",
          ...(node
            ? // Pods that run need them all (endpoint slices for kube-proxy, the volume binder, the
              // kube-root-ca.crt config map every service-account token volume mounts, which the
              // root CA file makes), and a key to sign the tokens with.
              ["--controllers=*", `--root-ca-file=${join(dir, "pki/apiserver.crt")}`, `--service-account-private-key-file=${join(dir, "sa.key")}`]
            : // What the stack's objects need: claims made and released, owned objects and namespaces
              // deleted, default service accounts (pods are refused without one).
              [`--controllers=${["statefulset", "garbage-collector", "namespace", "serviceaccount", "deployment", "replicaset", "disruption", "persistentvolumeclaim-protection"].map((c) => `${c}-controller`).join(",")}`]),
      ]);
    }

    const api = async (method: string, path: string, body?: unknown) => {
      const r = await call(server, ca, token, method, path, body);
      if (r.status >= 300) throw new KubeApiError(r.status, r.json.reason ?? "", r.json.message ?? JSON.stringify(r.json));
      return r.json;
    };
    return {
      kubeconfig,
      server,
      controllers,
      get: (path) => api("GET", path),
      list: async (path) => (await api("GET", path)).items,
      create: (path, body) => api("POST", path, body),
      patch: (path, body) => api("PATCH", path, body),
      delete: (path) => api("DELETE", path),
      kubeconfigFor: (user) => {
        if (!nodeUsers) throw new Error("the control plane was started without `node`: it knows no node components");
        return kubeconfigFor(server, ca, nodeUsers[user].token, nodeUsers[user].name);
      },
      logs,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
