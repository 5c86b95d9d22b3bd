/**
 * A one-node Kubernetes cluster on this machine, for tests whose pods must run: the control plane of
 * kubeCluster.ts, kube-scheduler, a kubelet, kube-proxy (iptables mode) and containerd with Debian's
 * runc, built by scripts/kubernetes/build.sh, each a child process stopped by its PID.
 *
 * Network: pods get 10.244.0.0/24 on the CNI bridge `rpcstack-kube0` (the bridge and host-local
 * plugins of Debian's containernetworking-plugins; no portmap, so no hostPort); Services get
 * 10.96.0.0/16. Two FORWARD rules of the harness admit the bridge's traffic past the host's DROP
 * policy (Docker's). Neither range meets Docker's docker0 (172.17.0.0/16) or its default pools
 * (172.17-31.0.0/16, 192.168.0.0/16), nor podman's 10.88.0.0/16. The bridge's own address, 10.244.0.1, is the node's IP (the kubelet
 * refuses a loopback one); the kubelet and the API server listen there (the kubelet also on
 * loopback), and NodePorts answer on 127.0.0.1 and 10.244.0.1 only. The API server publishes its
 * address as the `kubernetes` Service's endpoint, so pods reach it at 10.96.0.1:443 with their
 * service account (in-cluster config), as on a real cluster.
 *
 * DNS: CoreDNS (built by the same script, packed as an image) runs as kubeadm deploys it: the
 * Deployment `coredns` in kube-system with its service account and RBAC, the ConfigMap with its
 * Corefile and the Service `kube-dns` at 10.96.0.10, which the kubelet gives pods as their
 * nameserver (clusterDomain cluster.local, search `<ns>.svc.cluster.local svc.cluster.local
 * cluster.local`, ndots 5). Nothing is forwarded (offline): a name outside the cluster's zones is
 * answered NXDOMAIN at once. The start waits until the Service answers.
 *
 * Storage: volumes the harness makes, no provisioner. The default StorageClass `rpcstack-local`
 * (kubernetes.io/no-provisioner, WaitForFirstConsumer) and `volumes` local PersistentVolumes, each a
 * directory in the run's temp dir with a nominal capacity that nothing enforces. A claim binds to
 * the smallest free one that fits when its pod is scheduled; the volumes are Retain, so a claim
 * deleted leaves its volume Released (not reused) and the data in place until stop().
 *
 * Images: no registry. The pause image, a busybox image (Debian's busybox, glibc's getent and the
 * libraries they link) and CoreDNS's are packed here as OCI archives and imported into containerd;
 * importImages() loads those a Docker daemon holds (devtools/images). Pods must say
 * `imagePullPolicy: Never` or name a tag.
 *
 * The host: root, cgroup v1 with the cgroupfs driver (no systemd), iptables. What the run adds is
 * recorded against what was there at start, and stop() removes it also after a failed test: the
 * pods' processes, containerd's shims, the iptables chains named KUBE-* that were not there before
 * and every rule that jumps to them (IPv4 and IPv6), its own FORWARD rules, the pods' and
 * Services' conntrack entries, the sysctls the kubelet and kube-proxy set (route_localnet among them), the mounts under
 * the run's temp dir, the veths and the bridge, the cgroups under `rpcstack-kubenode`, and the host
 * paths the kubelet and containerd write whatever their flags (under /var/lib/kubelet,
 * /var/lib/cni, /var/log/containers) when they were not there before. One such node runs at a time
 * on a machine: a start waits for the one before it to stop (kubeNodeLock.ts).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync, createWriteStream, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, rmdirSync, writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { stringify as toToml } from "smol-toml";
import { stringify as toYaml } from "yaml";
import { CLUSTER_DNS_IP, CLUSTER_DOMAIN, COREDNS_IMAGE, startClusterDns } from "./kubeDns.js";
import { busyboxRootfs, ociArchive } from "./kubeImages.js";
import { holdKubeNodeLock } from "./kubeNodeLock.js";
import { kubeBinary, SERVICE_CIDR, startKubeCluster, type KubeCluster, type KubeObject } from "./kubeCluster.js";
import { freePort, start, waitFor, type Child } from "./net.js";

export { busyboxRootfs } from "./kubeImages.js";
export const NODE_NAME = "rpcstack-node";
export const BRIDGE = "rpcstack-kube0";
export const POD_CIDR = "10.244.0.0/24";
export const NODE_IP = "10.244.0.1";
export const STORAGE_CLASS = "rpcstack-local";
export const PAUSE_IMAGE = "rpcstack.local/pause:3.10.2";
/**
 * Debian's busybox with the libraries it links: sh, httpd, nc and the rest of its applets under /bin
 * (its wget crashes); also glibc's getent, which resolves a name as a libc program does.
 */
export const BUSYBOX_IMAGE = "rpcstack.local/busybox:1";
export { CLUSTER_DNS_IP, CLUSTER_DOMAIN, COREDNS_IMAGE } from "./kubeDns.js";
const CGROUP_ROOT = "rpcstack-kubenode";
const CNI_NETWORK = "rpcstack-kubenode";
const RUNC = "/usr/sbin/runc";
const CNI_BIN = "/usr/lib/cni";
/** What the kubelet and kube-proxy write to when started (kubelet: unless protectKernelDefaults). */
const SYSCTLS = [
  "net/ipv4/conf/all/route_localnet", "net/ipv4/ip_forward", "net/bridge/bridge-nf-call-iptables", "net/bridge/bridge-nf-call-ip6tables",
  "vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops", "kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
  "net/netfilter/nf_conntrack_max", "net/netfilter/nf_conntrack_tcp_timeout_established", "net/netfilter/nf_conntrack_tcp_timeout_close_wait",
];
/** Host paths the kubelet, containerd's CNI library and the CRI plugin use whatever their flags say; deepest first. */
const HOST_PATHS = [
  "/var/lib/kubelet/device-plugins/kubelet.sock", "/var/lib/kubelet/device-plugins", "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins",
  "/var/lib/kubelet/pod-resources", "/var/lib/kubelet", "/var/lib/cni/results", "/var/lib/cni", "/var/log/containers", "/var/log/pods", "/run/netns",
];
const IPTABLES = ["iptables", "ip6tables"] as const;
/** The bridge's traffic, forwarded when bridge-nf-call-iptables sends it through FORWARD (pod to pod, pod to a Service). */
const FORWARD_RULES = [["-i", BRIDGE], ["-o", BRIDGE]].map((match) => ["FORWARD", ...match, "-m", "comment", "--comment", CNI_NETWORK, "-j", "ACCEPT"]);
const TABLES = ["filter", "nat", "mangle"] as const;

export interface KubeNode {
  /** The control plane: the API as the admin. */
  readonly cluster: KubeCluster;
  readonly nodeName: string;
  /** How long the start took until the Node was Ready, the storage made and the cluster DNS answering, in ms. */
  readonly readyMs: number;
  /** Of that, from the DNS objects' creation until the kube-dns Service answered, in ms. */
  readonly dnsReadyMs: number;
  /** The local PersistentVolumes' names, for the StorageClass `rpcstack-local`. */
  readonly volumes: readonly string[];
  /**
   * Loads images the local Docker daemon holds (one `docker save | ctr import`, so the layers they
   * share go once), for pods that name them by the same references; nothing is pulled here.
   */
  importImages(dockerImages: readonly string[]): void;
  /** The last lines each process printed, for a failing test's message. */
  logs(): string;
  /** Stops everything and undoes what the run did to the host; throws naming what it could not undo. */
  stop(): Promise<void>;
}

const sh = (cmd: string, args: readonly string[], input?: Buffer | string) =>
  execFileSync(cmd, args, { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"], maxBuffer: 64 << 20 });
const trySh = (cmd: string, args: readonly string[]) => spawnSync(cmd, args, { encoding: "utf8" });

/** containerd's configuration, format version 3 (containerd 2.x reads 3; at 4 the top-level [grpc] is ignored). */
interface ContainerdConfig {
  version: 3;
  root: string;
  state: string;
  grpc: { address: string };
  ttrpc: { address: string };
  debug: { address: string };
  metrics: { address: string };
  plugins: Record<string, Record<string, unknown>>;
}

/** The KubeletConfiguration (kubelet.config.k8s.io/v1beta1) fields set here. */
interface KubeletConfiguration {
  apiVersion: "kubelet.config.k8s.io/v1beta1";
  kind: "KubeletConfiguration";
  failCgroupV1: boolean;
  cgroupDriver: "cgroupfs";
  cgroupRoot: string;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint: string;
  address: string;
  port: number;
  readOnlyPort: 0;
  healthzBindAddress: string;
  healthzPort: number;
  podLogsDir: string;
  authentication: { anonymous: { enabled: boolean }; webhook: { enabled: boolean }; x509: { clientCAFile: string } };
  authorization: { mode: "Webhook" };
  failSwapOn: boolean;
  resolvConf: string;
  clusterDNS: string[];
  clusterDomain: string;
  serializeImagePulls: boolean;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  evictionHard: Record<string, string>;
  syncFrequency: string;
  fileCheckFrequency: string;
  nodeStatusUpdateFrequency: string;
}

/** The KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) fields set here. */
interface KubeProxyConfiguration {
  apiVersion: "kubeproxy.config.k8s.io/v1alpha1";
  kind: "KubeProxyConfiguration";
  clientConnection: { kubeconfig: string };
  mode: "iptables";
  hostnameOverride: string;
  bindAddress: string;
  healthzBindAddress: string;
  metricsBindAddress: string;
  clusterCIDR: string;
  nodePortAddresses: string[];
  conntrack: { maxPerCore: number; min: number; tcpEstablishedTimeout: string; tcpCloseWaitTimeout: string };
}

/** A CNI network configuration list (CNI spec 1.0). */
interface CniConfList {
  cniVersion: "1.0.0";
  name: string;
  plugins: Record<string, unknown>[];
}

/** What was on the host before the run, so that stop() removes only what the run added. */
interface HostBefore {
  chains: Map<string, Set<string>>;
  sysctls: Map<string, string>;
  paths: Set<string>;
  cgroups: Set<string>;
}

const chains = (ipt: string, table: string): Set<string> => {
  const r = trySh(ipt, ["-t", table, "-S"]);
  return new Set(r.status === 0 ? r.stdout.split("\n").filter((l) => /^-[NP] /.test(l)).map((l) => l.split(" ")[1]) : []);
};
const readSysctl = (key: string) => {
  try {
    return readFileSync(join("/proc/sys", key), "utf8").trim();
  } catch {
    return undefined;
  }
};
/** The mounted cgroup hierarchies: one per v1 controller (and v2's `unified` beside them on a hybrid host), or v2's one. */
const cgroupHierarchies = (): { path: string; v2: boolean }[] =>
  readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter(Boolean).flatMap((l) => {
    const fstype = l.split(" - ")[1]?.split(" ")[0];
    return fstype === "cgroup" || fstype === "cgroup2" ? [{ path: l.split(" ")[4], v2: fstype === "cgroup2" }] : [];
  });
const mountsUnder = (dir: string): string[] =>
  readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter(Boolean)
    .map((l) => l.split(" ")[4].replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))))
    .filter((m) => m === dir || m.startsWith(dir + "/"));

function recordHost(): HostBefore {
  const before: HostBefore = { chains: new Map(), sysctls: new Map(), paths: new Set(), cgroups: new Set() };
  for (const ipt of IPTABLES) for (const t of TABLES) before.chains.set(`${ipt} ${t}`, chains(ipt, t));
  for (const k of SYSCTLS) {
    const v = readSysctl(k);
    if (v !== undefined) before.sysctls.set(k, v);
  }
  for (const p of HOST_PATHS) if (existsSync(p)) before.paths.add(p);
  for (const { path } of cgroupHierarchies()) if (existsSync(join(path, CGROUP_ROOT))) before.cgroups.add(path);
  return before;
}

/** Removes a cgroup directory and those below it (rmdir only: a cgroup with a process in it stays, and says so). */
function rmCgroup(dir: string) {
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) rmCgroup(join(dir, e.name));
  rmdirSync(dir);
}

/** Every process in the cgroup `dir` and those below it. */
function cgroupProcs(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const here = readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
  return [...here, ...readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => cgroupProcs(join(dir, e.name)))];
}

const kill = (pid: number) => {
  try {
    process.kill(pid, "SIGKILL");
  } catch {}
};

export interface KubeNodeOptions {
  /** How many local PersistentVolumes to make, and the capacity each claims to have. */
  volumes?: { count: number; capacity: string };
}

/**
 * Starts the one-node cluster and resolves once the Node is Ready and the StorageClass and volumes
 * exist. A start that fails midway undoes what it did before it throws, with the processes' output.
 */
export async function startKubeNode(opts: KubeNodeOptions = {}): Promise<KubeNode> {
  const t0 = Date.now();
  const volumeSpec = opts.volumes ?? { count: 4, capacity: "10Gi" };
  if (process.getuid?.() !== 0) throw new Error("a kubelet needs root");
  for (const p of [RUNC, ...["bridge", "host-local", "loopback"].map((b) => join(CNI_BIN, b))]) {
    if (!existsSync(p)) throw new Error(`${p} is missing (Debian packages runc and containernetworking-plugins)`);
  }
  const bin = {
    scheduler: kubeBinary("kube-scheduler"), kubelet: kubeBinary("kubelet"), proxy: kubeBinary("kube-proxy"),
    containerd: kubeBinary("containerd"), ctr: kubeBinary("ctr"), pause: kubeBinary("pause"), coredns: kubeBinary("coredns"),
  };
  kubeBinary("containerd-shim-runc-v2");
  const release = await holdKubeNodeLock();
  if (trySh("ip", ["link", "show", BRIDGE]).status === 0) {
    release();
    throw new Error(`the bridge ${BRIDGE} exists: another one-node cluster runs here, or one ended without stop() (\`ip link del ${BRIDGE}\` once nothing uses it)`);
  }

  const before = recordHost();
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-kubenode-"));
  const sock = join(dir, "containerd/containerd.sock");
  const children: Child[] = [];
  const named = new Map<string, Child>();
  let cluster: KubeCluster | undefined;
  let createdBridge = false;
  const addedForward: string[][] = [];
  let stopping = false;
  let died!: (e: Error) => void;
  const exited = new Promise<never>((_, reject) => (died = reject));
  exited.catch(() => {});
  const logs = () => [cluster?.logs() ?? "", ...children.map((c) => c.output().slice(-4000))].join("\n");
  const env = { ...process.env, PATH: `${dirname(bin.containerd)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` };
  const run = (name: string, path: string, args: string[]) => {
    const child = start(path, args, { env });
    // Also in a file while the node runs (its folder goes at stop): a stuck pod is read there.
    mkdirSync(join(dir, "logs"), { recursive: true });
    const file = createWriteStream(join(dir, "logs", `${name}.log`));
    child.proc.stdout?.pipe(file, { end: false });
    child.proc.stderr?.pipe(file, { end: false });
    child.proc.once("close", () => file.end());
    child.proc.once("close", (code, signal) => stopping || died(new Error(`${name} exited (${code ?? signal}):\n${child.output().slice(-3000)}`)));
    children.push(child);
    return child;
  };
  const ctr = (...args: string[]) => sh(bin.ctr, ["--address", sock, "--namespace", "k8s.io", ...args]);
  const importArchive = (archive: string) => ctr("images", "import", archive);

  const stop = async () => {
    stopping = true;
    const problems: string[] = [];
    const step = async (what: string, f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        problems.push(`${what}: ${(e as Error).message.split("\n")[0]}`);
      }
    };
    const [kubelet, scheduler, proxy, containerd] = ["kubelet", "kube-scheduler", "kube-proxy", "containerd"].map((n) => named.get(n));
    const alive = (c: Child | undefined) => !!c && c.proc.exitCode === null && c.proc.signalCode === null;
    // Pods deleted through the API while the kubelet runs are torn down by it, CNI DEL included;
    // cordoned first, so that no controller's replacement is placed here meanwhile.
    if (cluster && alive(kubelet)) {
      await step("pods", async () => {
        await cluster!.patch(`/api/v1/nodes/${NODE_NAME}`, { spec: { unschedulable: true } });
        await cluster!.delete("/api/v1/pods?gracePeriodSeconds=0").catch(async () => {
          for (const p of await cluster!.list("/api/v1/pods")) await cluster!.delete(`/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}?gracePeriodSeconds=0`);
        });
        await waitFor("the pods' sandboxes to go", async () => (trySh("ip", ["-o", "link", "show", "master", BRIDGE]).stdout.trim() === "" ? true : undefined), 60_000);
      });
    }
    for (const c of [proxy, kubelet, scheduler]) await c?.stop();
    if (alive(containerd)) {
      await step("containers", () => {
        const tasks = ctr("tasks", "ls", "-q").split("\n").filter(Boolean);
        for (const t of tasks) trySh(bin.ctr, ["--address", sock, "--namespace", "k8s.io", "tasks", "kill", "-s", "SIGKILL", t]);
        for (const t of tasks) trySh(bin.ctr, ["--address", sock, "--namespace", "k8s.io", "tasks", "delete", "-f", t]);
      });
    }
    // Whatever still runs in the pods' cgroups, then the shims (each in a process group of its own).
    for (let i = 0; i < 20; i++) {
      const left = [...new Set(cgroupHierarchies().flatMap((h) => cgroupProcs(join(h.path, CGROUP_ROOT))))];
      if (!left.length) break;
      left.forEach(kill);
      await new Promise((r) => setTimeout(r, 200));
    }
    await containerd?.stop();
    for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(sock)) kill(Number(pid));
      } catch {}
    }
    for (const c of children) await c.stop();
    await step("control plane", () => cluster?.stop());

    await step("iptables", () => {
      for (const ipt of IPTABLES) {
        for (const t of TABLES) {
          const had = before.chains.get(`${ipt} ${t}`) ?? new Set();
          const ours = [...chains(ipt, t)].filter((c) => !had.has(c) && c.startsWith("KUBE-"));
          if (!ours.length) continue;
          // Jumps into our chains from the host's own (INPUT, FORWARD, PREROUTING, ...), as -S prints them (shell-quoted).
          for (const rule of trySh(ipt, ["-t", t, "-S"]).stdout.split("\n")) {
            const m = /^-A (\S+) .*-j (\S+)/.exec(rule);
            if (m && !ours.includes(m[1]) && ours.includes(m[2])) sh("sh", ["-c", `${ipt} -t ${t} ${rule.replace(/^-A/, "-D")}`]);
          }
          for (const c of ours) trySh(ipt, ["-t", t, "-F", c]);
          for (const c of ours) {
            const r = trySh(ipt, ["-t", t, "-X", c]);
            if (r.status !== 0) problems.push(`${ipt} -t ${t} -X ${c}: ${r.stderr.trim()}`);
          }
        }
      }
    });
    await step("FORWARD rules", () => {
      for (const rule of addedForward.splice(0)) sh("iptables", ["-D", ...rule]);
    });
    // conntrack -D exits 1 when nothing matched.
    for (const f of [["-s", POD_CIDR], ["-d", POD_CIDR], ["-r", POD_CIDR], ["-d", SERVICE_CIDR]]) trySh("conntrack", ["-D", ...f]);
    await step("sysctls", () => {
      for (const [k, v] of before.sysctls) if (readSysctl(k) !== v) writeFileSync(join("/proc/sys", k), v);
    });
    await step("mounts", () => {
      for (const m of mountsUnder(dir).sort().reverse()) if (trySh("umount", [m]).status !== 0) trySh("umount", ["-l", m]);
      const left = mountsUnder(dir);
      if (left.length) throw new Error(`still mounted: ${left.join(", ")}`);
    });
    await step("network", () => {
      for (const l of trySh("ip", ["-o", "link", "show", "master", BRIDGE]).stdout.split("\n").filter(Boolean)) {
        trySh("ip", ["link", "del", l.split(": ")[1].split("@")[0]]);
      }
      if (createdBridge) sh("ip", ["link", "del", BRIDGE]);
    });
    await step("cgroups", () => {
      for (const { path } of cgroupHierarchies()) {
        const root = join(path, CGROUP_ROOT);
        if (!existsSync(root)) continue;
        if (before.cgroups.has(path)) for (const e of readdirSync(root, { withFileTypes: true })) e.isDirectory() && rmCgroup(join(root, e.name));
        else rmCgroup(root);
      }
    });
    await step("host paths", () => {
      for (const l of existsSync("/var/log/containers") ? readdirSync("/var/log/containers") : []) {
        const p = join("/var/log/containers", l);
        if (lstatSync(p).isSymbolicLink() && readlinkSync(p).startsWith(dir + "/")) rmSync(p);
      }
      for (const r of existsSync("/var/lib/cni/results") ? readdirSync("/var/lib/cni/results") : []) {
        if (r.startsWith(`${CNI_NETWORK}-`)) rmSync(join("/var/lib/cni/results", r));
      }
      for (const p of HOST_PATHS) {
        if (before.paths.has(p) || !existsSync(p)) continue;
        if (mountsUnder(p).length) throw new Error(`${p} has mounts under it: left`);
        rmSync(p, { recursive: true, force: true });
      }
    });
    if (!mountsUnder(dir).length) rmSync(dir, { recursive: true, force: true });
    else problems.push(`${dir} kept: mounts remain under it`);
    release();
    if (problems.length) throw new Error(`the one-node cluster's stop left things behind:\n${problems.join("\n")}`);
  };

  try {
    // The kubelet refuses a loopback node IP and this kernel has no dummy links: the bridge's own
    // address is the node's, made before the API server (which listens there too) and the first pod.
    sh("ip", ["link", "add", BRIDGE, "type", "bridge"]);
    createdBridge = true;
    sh("ip", ["addr", "add", `${NODE_IP}/24`, "dev", BRIDGE]);
    sh("ip", ["link", "set", BRIDGE, "up"]);
    for (const rule of FORWARD_RULES) {
      sh("iptables", ["-I", ...rule]);
      addedForward.push(rule);
    }

    // The API server's client certificate for the kubelet's own API (logs, port-forward), from a CA
    // of this run that the kubelet trusts.
    const pki = join(dir, "pki");
    mkdirSync(pki);
    const ossl = (...args: string[]) => sh("openssl", args);
    ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(pki, "kubelet-ca.key"), "-out", join(pki, "kubelet-ca.crt"), "-days", "2", "-subj", "/CN=rpcstack kubelet client CA");
    ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(pki, "apiserver-kubelet-client.key"), "-out", join(pki, "apiserver-kubelet-client.csr"), "-subj", "/O=system:masters/CN=kube-apiserver-kubelet-client");
    ossl("x509", "-req", "-in", join(pki, "apiserver-kubelet-client.csr"), "-CA", join(pki, "kubelet-ca.crt"), "-CAkey", join(pki, "kubelet-ca.key"), "-CAcreateserial", "-days", "2", "-out", join(pki, "apiserver-kubelet-client.crt"));
    cluster = await startKubeCluster({ node: { nodeName: NODE_NAME, address: NODE_IP, kubeletClient: { cert: join(pki, "apiserver-kubelet-client.crt"), key: join(pki, "apiserver-kubelet-client.key") } } });
    const kubeconfig = (user: Parameters<KubeCluster["kubeconfigFor"]>[0]) => {
      const file = join(dir, `${user}.kubeconfig`);
      writeFileSync(file, cluster!.kubeconfigFor(user), { mode: 0o600 });
      return file;
    };


    // cgroupfs: the kubelet's root must exist in every hierarchy it uses (on a hybrid host not the
    // controller-less v2 one), a v1 cpuset one with its CPUs and memory nodes filled in.
    const hierarchies = cgroupHierarchies();
    const v1 = hierarchies.some((h) => !h.v2);
    for (const { path, v2 } of hierarchies) {
      if (v1 && v2) continue;
      mkdirSync(join(path, CGROUP_ROOT), { recursive: true });
      if (!v2 && existsSync(join(path, "cpuset.cpus"))) for (const f of ["cpuset.cpus", "cpuset.mems"]) writeFileSync(join(path, CGROUP_ROOT, f), readFileSync(join(path, f)));
    }

    const cni: CniConfList = {
      cniVersion: "1.0.0",
      name: CNI_NETWORK,
      plugins: [
        {
          type: "bridge", bridge: BRIDGE, isGateway: true, ipMasq: false, hairpinMode: true,
          ipam: { type: "host-local", dataDir: join(dir, "cni/ipam"), ranges: [[{ subnet: POD_CIDR, gateway: NODE_IP }]], routes: [{ dst: "0.0.0.0/0" }] },
        },
      ],
    };
    mkdirSync(join(dir, "cni/net.d"), { recursive: true });
    writeFileSync(join(dir, "cni/net.d/10-rpcstack.conflist"), JSON.stringify(cni, null, 2));

    const containerd: ContainerdConfig = {
      version: 3,
      root: join(dir, "containerd/root"),
      state: join(dir, "containerd/state"),
      grpc: { address: sock },
      ttrpc: { address: `${sock}.ttrpc` },
      debug: { address: "" },
      metrics: { address: "" },
      plugins: {
        // The shims' sockets default to /run/containerd/s, which Docker's containerd shares; each
        // socket's path is this folder plus 65 characters, within the 107 a socket path may have.
        "io.containerd.shim.v1.manager": { socket_dir: join(dir, "s") },
        "io.containerd.internal.v1.opt": { path: join(dir, "containerd/opt") },
        "io.containerd.nri.v1.nri": { disable: true },
        "io.containerd.cri.v1.images": { snapshotter: "overlayfs", pinned_images: { sandbox: PAUSE_IMAGE } },
        "io.containerd.cri.v1.runtime": {
          enable_selinux: false,
          // This VM withholds CAP_SYS_RESOURCE: runc cannot set the -998 the kubelet asks for a
          // sandbox ("failed to update /proc/self/oom_score_adj: Permission denied"); containers
          // keep containerd's own score instead.
          restrict_oom_score_adj: true,
          netns_mounts_under_state_dir: true,
          containerd: {
            default_runtime_name: "runc",
            runtimes: { runc: { runtime_type: "io.containerd.runc.v2", options: { BinaryName: RUNC, Root: join(dir, "runc"), SystemdCgroup: false } } },
          },
          cni: { bin_dirs: [CNI_BIN], conf_dir: join(dir, "cni/net.d"), max_conf_num: 1 },
        },
        "io.containerd.grpc.v1.cri": { stream_server_address: "127.0.0.1", stream_server_port: "0" },
      },
    };
    mkdirSync(join(dir, "containerd"), { recursive: true });
    writeFileSync(join(dir, "containerd/config.toml"), toToml(containerd));
    // containerd also merges /etc/containerd/conf.d/*.toml, which could move the socket: the
    // effective configuration must serve where the kubelet will call.
    const dump = sh(bin.containerd, ["--config", join(dir, "containerd/config.toml"), "config", "dump"]);
    if (!dump.includes(`address = '${sock}'`) && !dump.includes(`address = "${sock}"`)) throw new Error(`containerd's effective configuration does not serve on ${sock}:\n${dump.slice(0, 2000)}`);
    named.set("containerd", run("containerd", bin.containerd, ["--config", join(dir, "containerd/config.toml")]));
    await Promise.race([exited, waitFor("containerd", async () => (trySh(bin.ctr, ["--address", sock, "version"]).status === 0 ? true : undefined), 60_000)]);

    const pauseRoot = join(dir, "images/pause-root");
    mkdirSync(pauseRoot, { recursive: true });
    copyFileSync(bin.pause, join(pauseRoot, "pause"));
    importArchive(ociArchive(PAUSE_IMAGE, pauseRoot, { Entrypoint: ["/pause"] }, join(dir, "images/pause")));
    importArchive(ociArchive(BUSYBOX_IMAGE, busyboxRootfs(join(dir, "images/busybox-root")), { Cmd: ["sh"], Env: ["PATH=/bin"] }, join(dir, "images/busybox")));
    const corednsRoot = join(dir, "images/coredns-root");
    for (const d of ["etc", "tmp"]) mkdirSync(join(corednsRoot, d), { recursive: true });
    copyFileSync(bin.coredns, join(corednsRoot, "coredns"));
    importArchive(ociArchive(COREDNS_IMAGE, corednsRoot, { Entrypoint: ["/coredns"] }, join(dir, "images/coredns")));

    const [kubeletPort, kubeletHealthz, schedulerPort, proxyHealthz, proxyMetrics] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
    const kubelet: KubeletConfiguration = {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      // Since 1.35 the kubelet refuses cgroup v1 unless told; this machine has no v2 controllers.
      failCgroupV1: false,
      cgroupDriver: "cgroupfs",
      cgroupRoot: `/${CGROUP_ROOT}`,
      containerRuntimeEndpoint: `unix://${sock}`,
      imageServiceEndpoint: `unix://${sock}`,
      address: NODE_IP,
      port: kubeletPort,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort: kubeletHealthz,
      podLogsDir: join(dir, "pod-logs"),
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: join(pki, "kubelet-ca.crt") } },
      authorization: { mode: "Webhook" },
      failSwapOn: false,
      // The host's, for pods with dnsPolicy Default (CoreDNS) and the search domains it adds.
      resolvConf: "/etc/resolv.conf",
      clusterDNS: [CLUSTER_DNS_IP],
      clusterDomain: CLUSTER_DOMAIN,
      serializeImagePulls: false,
      // The images cannot be pulled again: never collected, and no eviction on a full test disk.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%" },
      syncFrequency: "10s",
      fileCheckFrequency: "10s",
      nodeStatusUpdateFrequency: "5s",
    };
    mkdirSync(join(dir, "kubelet"), { recursive: true });
    writeFileSync(join(dir, "kubelet/config.yaml"), toYaml(kubelet));
    named.set("kubelet", run("kubelet", bin.kubelet, [
      `--config=${join(dir, "kubelet/config.yaml")}`, `--kubeconfig=${kubeconfig("kubelet")}`, `--root-dir=${join(dir, "kubelet")}`,
      `--cert-dir=${join(dir, "kubelet/pki")}`, `--hostname-override=${NODE_NAME}`, `--node-ip=${NODE_IP}`, "--v=1",
    ]));
    named.set("kube-scheduler", run("kube-scheduler", bin.scheduler, [
      `--kubeconfig=${kubeconfig("kube-scheduler")}`, "--bind-address=127.0.0.1", `--secure-port=${schedulerPort}`, "--leader-elect=false",
    ]));
    const proxy: KubeProxyConfiguration = {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      clientConnection: { kubeconfig: kubeconfig("kube-proxy") },
      mode: "iptables",
      hostnameOverride: NODE_NAME,
      bindAddress: "127.0.0.1",
      healthzBindAddress: `127.0.0.1:${proxyHealthz}`,
      metricsBindAddress: `127.0.0.1:${proxyMetrics}`,
      clusterCIDR: POD_CIDR,
      // Not the host's own interfaces (eth0, docker0): loopback and the bridge only.
      nodePortAddresses: ["127.0.0.0/8", `${NODE_IP}/32`],
      // 0: the host's conntrack limits and timeouts are left as they are.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
    };
    writeFileSync(join(dir, "kube-proxy.yaml"), toYaml(proxy));
    named.set("kube-proxy", run("kube-proxy", bin.proxy, [`--config=${join(dir, "kube-proxy.yaml")}`, "--v=1"]));

    await Promise.race([exited, waitFor(`node ${NODE_NAME} Ready`, async () => {
      const n = await cluster!.get(`/api/v1/nodes/${NODE_NAME}`).catch(() => undefined);
      return n?.status?.conditions?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True") ? true : undefined;
    }, 120_000)]);

    await cluster.create("/apis/storage.k8s.io/v1/storageclasses", {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: STORAGE_CLASS, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
      provisioner: "kubernetes.io/no-provisioner",
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Retain",
    } as KubeObject);
    const volumes: string[] = [];
    for (let i = 0; i < volumeSpec.count; i++) {
      const name = `rpcstack-local-${i}`;
      const path = join(dir, "volumes", name);
      mkdirSync(path, { recursive: true });
      await cluster.create("/api/v1/persistentvolumes", {
        apiVersion: "v1",
        kind: "PersistentVolume",
        metadata: { name },
        spec: {
          capacity: { storage: volumeSpec.capacity },
          accessModes: ["ReadWriteOnce"],
          persistentVolumeReclaimPolicy: "Retain",
          storageClassName: STORAGE_CLASS,
          volumeMode: "Filesystem",
          local: { path },
          nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [NODE_NAME] }] }] } },
        },
      });
      volumes.push(name);
    }

    const dnsReadyMs = await startClusterDns(cluster, exited);

    return {
      cluster,
      nodeName: NODE_NAME,
      readyMs: Date.now() - t0,
      dnsReadyMs,
      volumes,
      importImages: (dockerImages) => {
        execFileSync("bash", ["-o", "pipefail", "-c", 'ctr="$1" sock="$2"; shift 2; docker save "$@" | "$ctr" --address "$sock" --namespace k8s.io images import -', "bash", bin.ctr, sock, ...dockerImages], { stdio: "pipe", maxBuffer: 64 << 20 });
      },
      logs,
      stop,
    };
  } catch (e) {
    const output = logs();
    await stop().catch((s) => console.error((s as Error).message));
    throw new Error(`${(e as Error).message}\n${output}`);
  }
}
