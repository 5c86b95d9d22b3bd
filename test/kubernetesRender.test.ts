/**
 * The plan rendered for a cluster (kubernetes/): what an operator's cluster would be given. Pure:
 * file contents and secrets are markers here, so a test can see where each one lands.
 */
import { describe, expect, it } from "vitest";
import { LEAVE_ROTATION_SECONDS } from "../services/usage.js";
import { chainDataGB, type RpcStackConfig } from "../config/index.js";
import { GATEWAY_SERVICE, RUNS_FOR, SCRAPE_LABEL_PREFIX, WAIT_FOR, renderCluster, type K8sObject } from "../kubernetes/index.js";
import { scrapeJobs } from "../monitoring/targets.js";
import { planStack } from "../plan/index.js";
import { kubeStack } from "./support/kubeStack.js";

const SECRET = "<<secret>>";

function render(s: RpcStackConfig) {
  if (s.host.kind !== "kubernetes") throw new Error("not a kubernetes stack");
  const plan = planStack(s);
  return renderCluster<string>({
    plan,
    settings: s,
    host: s.host,
    generated: {
      gateway: [{ name: "haproxy.cfg", content: plan.gatewayConfig.compiled.config }, ...Object.entries(plan.gatewayConfig.compiled.files).map(([name, content]) => ({ name, content }))],
      keys: [{ name: "keys.map", content: `${SECRET} keys`, secret: true }, { name: "quotas.map", content: "" }],
    },
    content: (f) => `file ${f.source}`,
    secretValue: (n) => `${SECRET} ${n}`,
  });
}

const objects = (s: RpcStackConfig) => render(s).map((r) => r.object);
const one = (os: K8sObject[], kind: string, name: string) => {
  const o = os.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind}/${name} among ${os.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return o as any;
};
const containersOf = (o: any) => [...(o.spec.template.spec.initContainers ?? []), ...o.spec.template.spec.containers];

describe("the testnet stack on a cluster", () => {
  const os = objects(kubeStack("testnet"));

  it("each node is a StatefulSet of one pod whose chain data is a claim sized from the sizing table, kept when the StatefulSet goes", () => {
    const geth = one(os, "StatefulSet", "geth");
    expect(geth.spec.replicas).toBe(1);
    expect(geth.spec.template.spec.containers.map((c: any) => c.name)).toEqual(["geth", "lighthouse"]);
    const claims = Object.fromEntries(geth.spec.volumeClaimTemplates.map((t: any) => [t.metadata.name, t.spec.resources.requests.storage]));
    // Sepolia geth post-merge and Lighthouse, each with 6 months of growth (config/resources.ts).
    expect(Object.keys(claims)).toEqual(["geth", "lighthouse"]);
    for (const size of Object.values(claims)) expect(size).toMatch(/^\d+Gi$/);
    expect(geth.spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: "Retain", whenScaled: "Retain" });
    const juno = one(os, "StatefulSet", "juno");
    expect(juno.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)).toEqual(["juno"]);
  });

  it("each claim is the size the plan gives its volume, which is the sizing table's figure for the volume's client, also for a second node", () => {
    const s = kubeStack("testnet", { extra: { nodes: { l1: ["main", "main"], l2: ["main", "main"] } } });
    const plan = planStack(s);
    const volumes = [...plan.nodes.l1, ...plan.nodes.l2].flatMap((n) => n.dataVolumes);
    expect(volumes.map((v) => `${v.key}:${v.chainData?.client}`)).toEqual(["geth:geth", "lighthouse:lighthouse", "geth-2:geth", "lighthouse-2:lighthouse", "juno:juno", "juno-2:juno"]);
    for (const v of volumes) expect(v.chainData!.sizeGB, v.key).toBe(chainDataGB(s, v.chainData!.client));
    const claims = objects(s).filter((o) => o.kind === "StatefulSet").flatMap((o: any) => o.spec.volumeClaimTemplates.map((t: any) => [`${o.metadata.name}/${t.metadata.name}`, t.spec.resources.requests.storage]));
    expect(Object.fromEntries(claims)).toEqual({
      "geth/geth": `${chainDataGB(s, "geth")}Gi`, "geth/lighthouse": `${chainDataGB(s, "lighthouse")}Gi`,
      "geth-2/geth-2": `${chainDataGB(s, "geth")}Gi`, "geth-2/lighthouse-2": `${chainDataGB(s, "lighthouse")}Gi`,
      "juno/juno": `${chainDataGB(s, "juno")}Gi`, "juno-2/juno-2": `${chainDataGB(s, "juno")}Gi`,
      // Each gateway replica's usage ledger.
      "gateway/usage": "1Gi",
    });
    // Geth and Lighthouse ask for their own rows' memory, found by the client the spec names.
    const [geth2, lighthouse2] = one(objects(s), "StatefulSet", "geth-2").spec.template.spec.containers;
    expect([geth2.resources.requests.memory, lighthouse2.resources.requests.memory]).toEqual(["8Gi", "8Gi"]);
  });

  it("the JWT shared by geth and Lighthouse is made in the pod by an init container, never in a claim or a ConfigMap", () => {
    const geth = one(os, "StatefulSet", "geth");
    expect(geth.spec.template.spec.initContainers.map((c: any) => c.name)).toEqual(["jwt-init"]);
    expect(geth.spec.template.spec.volumes).toContainEqual({ name: "jwt", emptyDir: {} });
  });

  it("the Docker health checks become readiness probes; no liveness probe restarts a syncing node", () => {
    for (const c of one(os, "StatefulSet", "geth").spec.template.spec.containers) {
      expect(c.readinessProbe.exec.command.length, c.name).toBeGreaterThan(0);
      expect(c.livenessProbe, c.name).toBeUndefined();
    }
  });

  it("names resolve as on the Docker network, also while a node is not ready (Lighthouse reaches a syncing geth)", () => {
    const svc = one(os, "Service", "geth");
    expect(svc.spec.publishNotReadyAddresses).toBe(true);
    expect(svc.spec.ports.map((p: any) => p.port)).toEqual([8545, 8546, 8551, 6060]);
    expect(one(os, "Service", "lighthouse").spec.selector).toEqual(svc.spec.selector);
    // p2p is reached on the cluster node's own address, as Docker publishes it on the host.
    const ports = one(os, "StatefulSet", "geth").spec.template.spec.containers[0].ports;
    expect(ports.filter((p: any) => p.hostPort).map((p: any) => `${p.hostPort}/${p.protocol}`)).toEqual(["30303/TCP", "30303/UDP"]);
  });

  it("the tier becomes requests and limits: a node asks for its client's memory, may use the tier's, and is never CPU-throttled", () => {
    const [geth] = one(os, "StatefulSet", "geth").spec.template.spec.containers;
    expect(geth.resources.requests.memory).toBe("8Gi");
    expect(geth.resources.limits).toEqual({ memory: "16Gi" });
    expect(geth.resources.requests.cpu).toMatch(/^\d+m$/);
    const [jwt] = one(os, "StatefulSet", "geth").spec.template.spec.initContainers;
    expect(jwt.resources.requests.memory).toBe("128Mi");
  });

  it("the gateway starts after every Service its configuration names exists (a name it cannot resolve at start stays unresolved)", () => {
    const r = render(kubeStack("testnet")).find((x) => x.object.kind === "StatefulSet" && x.object.metadata.name === "gateway")!;
    expect(r.after).toEqual(expect.arrayContaining(["Service/geth", "Service/juno", "Service/sync-health", "Service/haproxy"]));
  });

  it("a new external L1 URL or badge key rolls the pods that read it from their environment", () => {
    const s = kubeStack("testnet", { extra: { l1: { external: { rpcHttp: "https://l1.example.com/k", rpcWs: "wss://l1.example.com/k" } } } });
    const juno = render(s).find((x) => x.object.kind === "StatefulSet" && x.object.metadata.name === "juno")!;
    expect(juno.mounts).toContain("Secret/rpcstack-secrets");
  });

  it("the gateway: at least two replicas that start together and roll one at a time, a disruption budget, spread over machines, scraped by Prometheus", () => {
    const gw = one(os, "StatefulSet", "gateway");
    expect(gw.spec.replicas).toBe(2);
    expect([gw.spec.podManagementPolicy, gw.spec.updateStrategy]).toEqual(["Parallel", { type: "RollingUpdate" }]);
    expect(one(os, "PodDisruptionBudget", "gateway").spec).toEqual({ maxUnavailable: 1, selector: gw.spec.selector });
    const term = gw.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
    expect(term).toEqual({ topologyKey: "kubernetes.io/hostname", labelSelector: gw.spec.selector });
    expect(one(os, "Service", "haproxy").metadata.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "8405", "prometheus.io/path": "/metrics" });
    expect(gw.spec.template.spec.containers.map((c: any) => c.name)).toEqual(["haproxy", "usage"]);
  });

  it("quotas across replicas: a counter store (Valkey, no disk) beside them, each replica's keeper exchanging with it every second, reached from the stack's pods only", () => {
    const q = objects(kubeStack("testnet", { gateway: { quotas: [{ name: "ci-first", calls: 1000, per: "day" }] } }));
    const store = one(q, "Deployment", "counters");
    const [valkey] = store.spec.template.spec.containers;
    expect(valkey.image).toBe("valkey/valkey:9.0.8");
    expect(valkey.args ?? valkey.command).toEqual(expect.arrayContaining(["--save", "", "--appendonly", "no"]));
    expect(one(q, "Service", "counters").spec.ports.map((p: any) => p.port)).toEqual([6379]);
    const keeper = one(q, "StatefulSet", "gateway").spec.template.spec.containers.find((c: any) => c.name === "usage");
    const args = [...(keeper.command ?? []), ...(keeper.args ?? [])].join(" ");
    expect(args).toContain("--store redis://counters:6379 --rate-others-map /usr/local/etc/haproxy/rate_others.map --interval-seconds 1");
    // A key's rate adds what the other replicas counted (the map the keeper fills).
    expect(one(q, "ConfigMap", "gateway-files").data["usr_local_etc_haproxy_haproxy.cfg"]).toContain("set-var(txn.rate_others) var(txn.keyname),map_str_int(/usr/local/etc/haproxy/rate_others.map,0)");
    expect(args).toContain("--quota-used-map /usr/local/etc/haproxy/quota_used.map");
    // 6379 is no port the policy opens to anyone else: only p2p, 443 and (with metricsFrom) the metrics ports are.
    const policy = JSON.stringify(q.filter((o) => o.kind === "NetworkPolicy"));
    expect(policy).not.toContain("6379");
    // The quota map is one of the files HAProxy gets with the key map, where its rules read it.
    const haproxy = one(q, "StatefulSet", "gateway").spec.template.spec.containers[0];
    expect(haproxy.volumeMounts.map((m: any) => m.mountPath)).toEqual(expect.arrayContaining(["/var/lib/rpcstack-keys/keys.map", "/var/lib/rpcstack-keys/quotas.map"]));
  });

  it("the certificate comes from the operator's TLS Secret; no ACME client runs in the cluster", () => {
    const gw = one(os, "StatefulSet", "gateway");
    expect(gw.spec.template.spec.initContainers.map((c: any) => c.name)).toEqual(["cert-from-secret"]);
    expect(gw.spec.template.spec.volumes).toContainEqual({ name: "tls", secret: { secretName: "rpc-testnet-tls" } });
    expect(containersOf(gw).map((c) => c.name)).not.toContain("acme");
  });

  it("what has no place on a cluster is left out: key sync, disk watchers, rollout steps", () => {
    const names = os.filter((o) => o.kind === "StatefulSet" || o.kind === "Deployment").flatMap((o) => containersOf(o).map((c: any) => c.name));
    for (const gone of ["key-sync", "disk-watch", "sync-check", "acme"]) expect(names).not.toContain(gone);
    expect(names.some((n) => n.startsWith("rollout"))).toBe(false);
  });

  it("the sync check is a Job after every node, run once (its program waits and retries), mounting no claim; a node's new image runs it again", () => {
    const rendered = render(kubeStack("testnet"));
    const job = rendered.find((r) => r.object.kind === "Job")!;
    expect(job.object.metadata.name).toBe("sync-check");
    expect(job.after).toEqual(expect.arrayContaining(["StatefulSet/geth", "StatefulSet/juno"]));
    const spec = (job.object as any).spec;
    expect(spec.backoffLimit).toBe(0);
    expect(spec.template.spec.restartPolicy).toBe("Never");
    const [c] = spec.template.spec.containers;
    expect(c.args).toEqual(expect.arrayContaining(["--l1", "--l2", "--timeout-minutes"]));
    expect(c.args).not.toContain("--disk");
    expect((spec.template.spec.volumes ?? []).filter((v: any) => v.persistentVolumeClaim)).toEqual([]);
    const runsFor = (x: RpcStackConfig) => (objects(x).find((o) => o.kind === "Job") as any).spec.template.metadata.annotations[RUNS_FOR];
    expect(runsFor(kubeStack("testnet"))).toBe(runsFor(kubeStack("testnet")));
    expect(runsFor(kubeStack("testnet", { extra: { l1: { executionImage: "ethereum/client-go:v1.17.6" } } }))).not.toBe(runsFor(kubeStack("testnet")));
  });

  it("the key map is a Secret mounted where HAProxy reads it; no ConfigMap holds a secret", () => {
    const rendered = render(kubeStack("testnet"));
    for (const r of rendered.filter((x) => x.object.kind === "ConfigMap")) expect(JSON.stringify(r.object), r.object.metadata.name).not.toContain(SECRET);
    const keys = rendered.find((r) => r.object.kind === "Secret" && JSON.stringify(r.object).includes(`${SECRET} keys`))!;
    expect(keys.secret).toBe(true);
    const haproxy = one(os, "StatefulSet", "gateway").spec.template.spec.containers[0];
    expect(haproxy.volumeMounts).toContainEqual({ name: "secret-files", mountPath: "/var/lib/rpcstack-keys/keys.map", subPath: "var_lib_rpcstack-keys_keys.map", readOnly: true });
  });

  it("reached through a LoadBalancer that keeps the caller's address (the per-address limits need it)", () => {
    const svc = one(os, "Service", GATEWAY_SERVICE);
    expect(svc.spec).toMatchObject({ type: "LoadBalancer", externalTrafficPolicy: "Local", ports: [{ port: 443, targetPort: 443 }] });
  });

  it("network policies: the nodes' RPC, engine and beacon APIs and every metrics port are reached only from the stack's pods; p2p and the gateway's 443 from anywhere", () => {
    const internal = one(os, "NetworkPolicy", "rpcstack-internal").spec;
    expect(internal.podSelector).toEqual({ matchLabels: { "app.kubernetes.io/part-of": "rpcstack" } });
    expect(internal.ingress[0]).toEqual({ from: [{ podSelector: { matchLabels: { "app.kubernetes.io/part-of": "rpcstack" } } }] });
    expect(internal.ingress).toHaveLength(2);
    const open = internal.ingress[1].ports.map((p: any) => p.port);
    expect(open).toEqual(expect.arrayContaining([30303, 9000, 9001]));
    // The usage keeper's 9107 tells every key's calls; HAProxy's 8405 the gateway's traffic.
    for (const closed of [8545, 8546, 8551, 5052, 6061, 6060, 8405, 9107]) expect(open).not.toContain(closed);
    expect(one(os, "NetworkPolicy", "rpcstack-gateway").spec.ingress).toEqual([{ ports: [{ port: 443, protocol: "TCP" }] }]);
  });

  it("host.metricsFrom lets the cluster's Prometheus in to the metrics ports, and only to them", () => {
    const withProm = objects(kubeStack("testnet", { host: { metricsFrom: { namespace: "monitoring", podLabels: { "app.kubernetes.io/name": "prometheus" } } } }));
    const ingress = one(withProm, "NetworkPolicy", "rpcstack-internal").spec.ingress;
    expect(ingress).toHaveLength(3);
    expect(ingress[2].from).toEqual([{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } }, podSelector: { matchLabels: { "app.kubernetes.io/name": "prometheus" } } }]);
    const ports = ingress[2].ports.map((p: any) => p.port);
    expect(ports).toEqual(expect.arrayContaining([6060, 8405, 9107]));
    for (const closed of [8545, 8546, 8551, 5052, 6061, 30303]) expect(ports).not.toContain(closed);
    // Every port a scrape annotation names is among them.
    const scraped = withProm.filter((o) => o.metadata.annotations?.["prometheus.io/scrape"] === "true").map((o) => Number(o.metadata.annotations!["prometheus.io/port"]));
    expect(scraped.length).toBeGreaterThan(0);
    for (const p of scraped) expect(ports).toContain(p);
  });

  it("each scraped Service names the job and target labels rpcstack's own Prometheus gives the same endpoint, once each", () => {
    const settings = kubeStack("testnet");
    // But the disk watcher's: a cluster has none (the kubelet reports volume use).
    const want = scrapeJobs(settings, planStack(settings)).filter((j) => j.name !== "disk").flatMap((j) => j.targets.map((t) => ({ job: j.name, path: j.metricsPath, port: t.address.split(":")[1], ...t.labels }))).map((x) => JSON.stringify(x)).sort();
    const got = os.filter((o) => o.kind === "Service" && o.metadata.annotations?.["prometheus.io/scrape"] === "true").map((o) => {
      const labels = Object.fromEntries(Object.entries(o.metadata.labels ?? {}).filter(([k]) => k.startsWith(SCRAPE_LABEL_PREFIX)).map(([k, v]) => [k.slice(SCRAPE_LABEL_PREFIX.length), v]));
      const { job, ...rest } = labels;
      return JSON.stringify({ job, path: o.metadata.annotations!["prometheus.io/path"], port: o.metadata.annotations!["prometheus.io/port"], ...rest });
    }).sort();
    expect(got).toEqual(want);
    expect(got.some((x) => x.includes('"job":"geth"') && x.includes('"node":"geth"'))).toBe(true);
  });

  it("no pod gets a service account token: nothing in it talks to the API server", () => {
    for (const o of os.filter((x) => x.kind === "StatefulSet" || x.kind === "Deployment")) expect((o as any).spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it("a gateway replica being stopped serves on until kube-proxy has left it out, then stops softly; its keeper reads it meanwhile", () => {
    const gw = os.find((o) => o.kind === "StatefulSet" && o.metadata.name === "gateway") as any;
    const c = Object.fromEntries(gw.spec.template.spec.containers.map((x: any) => [x.name, x]));
    expect(c.haproxy.lifecycle.preStop.exec.command).toEqual(["/bin/sh", "-c", `sleep ${LEAVE_ROTATION_SECONDS}; kill -USR1 1; while kill -0 1 2>/dev/null; do sleep 1; done`]);
    expect(c.usage.lifecycle.preStop.exec.command).toEqual(["sleep", String(LEAVE_ROTATION_SECONDS + 2)]);
    expect(gw.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(LEAVE_ROTATION_SECONDS + 10);
    // Nodes have one replica each: nothing to hand over to, no hook.
    const geth = os.find((o) => o.kind === "StatefulSet" && o.metadata.name !== "gateway") as any;
    for (const x of geth.spec.template.spec.containers) expect(x.lifecycle, x.name).toBeUndefined();
  });

  it("no pod gets the Services' link variables: geth would read GETH_PORT=tcp://... as its --port flag", () => {
    for (const o of os.filter((x) => x.kind === "StatefulSet" || x.kind === "Deployment")) expect((o as any).spec.template.spec.enableServiceLinks, o.metadata.name).toBe(false);
  });
});

describe("choices an operator makes", () => {
  it("retainData: false lets the claims go with their StatefulSet", () => {
    const os = objects(kubeStack("testnet", { extra: { retainData: false } }));
    expect(one(os, "StatefulSet", "geth").spec.persistentVolumeClaimRetentionPolicy.whenDeleted).toBe("Delete");
  });

  it("a storage class and a namespace are used as named", () => {
    const os = objects(kubeStack("testnet", { host: { namespace: "rpc", storageClass: "fast-ssd" } }));
    expect(os.every((o) => o.metadata.namespace === "rpc")).toBe(true);
    expect(os.some((o) => o.kind === "Namespace")).toBe(false);
    expect(one(os, "StatefulSet", "juno").spec.volumeClaimTemplates[0].spec.storageClassName).toBe("fast-ssd");
  });

  it("several nodes of a layer: one StatefulSet each, each after the one before (the rollout order), spread over machines", () => {
    const rendered = render(kubeStack("testnet", { extra: { nodes: { l1: ["main", "main"], l2: ["main", "main"] } } }));
    const sets = rendered.filter((r) => r.object.kind === "StatefulSet");
    const steps = sets.map((r) => [r.object.metadata.name, r.after.filter((a) => a.startsWith("StatefulSet/"))]);
    expect(steps).toEqual([["geth", []], ["geth-2", ["StatefulSet/geth"]], ["juno", []], ["juno-2", ["StatefulSet/juno"]], ["gateway", []]]);
    const term = (sets[1].object as any).spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
    expect(term.labelSelector).toEqual({ matchLabels: { "rpcstack.io/layer": "l1" } });
    // A drain takes at most one node of each layer.
    const budgets = rendered.filter((r) => r.object.kind === "PodDisruptionBudget").map((r) => [r.object.metadata.name, (r.object as any).spec]);
    expect(budgets).toEqual(
      expect.arrayContaining([
        ["l1-nodes", { maxUnavailable: 1, selector: { matchLabels: { "rpcstack.io/layer": "l1" } } }],
        ["l2-nodes", { maxUnavailable: 1, selector: { matchLabels: { "rpcstack.io/layer": "l2" } } }],
      ]),
    );
    expect(objects(kubeStack("testnet")).filter((o) => o.kind === "PodDisruptionBudget").map((o) => o.metadata.name)).toEqual(["gateway"]);
  });

  it("NodePort with a fixed port, or an Ingress that passes TLS through to HAProxy for the domain", () => {
    const np = one(objects(kubeStack("testnet", { host: { expose: { kind: "NodePort", nodePort: 30443 } } })), "Service", GATEWAY_SERVICE);
    expect(np.spec).toMatchObject({ type: "NodePort", externalTrafficPolicy: "Local", ports: [{ port: 443, nodePort: 30443 }] });
    const os = objects(kubeStack("testnet", { host: { expose: { kind: "Ingress", ingressClass: "nginx" } } }));
    expect(one(os, "Service", GATEWAY_SERVICE).spec.type).toBe("ClusterIP");
    const ing = one(os, "Ingress", GATEWAY_SERVICE);
    expect(ing.metadata.annotations["nginx.ingress.kubernetes.io/ssl-passthrough"]).toBe("true");
    expect(ing.spec.ingressClassName).toBe("nginx");
    expect(ing.spec.rules[0].host).toBe("rpc-testnet.example.com");
  });

  it("awaitReady: false marks every object so the provider does not wait for pods (a cluster without machines yet)", () => {
    const os = objects(kubeStack("local", { host: { awaitReady: false } }));
    for (const o of os) expect(o.metadata.annotations?.["pulumi.com/skipAwait"], `${o.kind}/${o.metadata.name}`).toBe("true");
    expect(objects(kubeStack("local")).some((o) => o.metadata.annotations?.["pulumi.com/skipAwait"])).toBe(false);
    for (const o of os.filter((x) => x.kind === "StatefulSet")) expect(o.metadata.annotations?.[WAIT_FOR], o.metadata.name).toBeUndefined();
  });

  it("awaitReady: the provider waits for a StatefulSet's roll by conditions read at the current generation (its own wait takes a stale status for done)", () => {
    const sets = objects(kubeStack("local")).filter((o) => o.kind === "StatefulSet") as any[];
    expect(sets.map((o) => o.metadata.name).sort()).toEqual(["gateway", "geth", "starknet-devnet"]);
    for (const o of sets) {
      const n = o.spec.replicas;
      expect(JSON.parse(o.metadata.annotations[WAIT_FOR]), o.metadata.name).toEqual([`jsonpath={.status.updatedReplicas}=${n}`, `jsonpath={.status.readyReplicas}=${n}`]);
    }
  });

  it("an external L1: its URLs reach the L2 node from a Secret, and haproxy.cfg, which names them, is a Secret too", () => {
    const s = kubeStack("testnet", { extra: { l1: { external: { rpcHttp: "https://l1.example.com/k", rpcWs: "wss://l1.example.com/k" } } } });
    const rendered = render(s);
    expect(rendered.some((r) => r.object.kind === "StatefulSet" && r.object.metadata.name === "geth")).toBe(false);
    const secrets = rendered.find((r) => r.object.kind === "Secret" && r.object.metadata.name === "rpcstack-secrets")!;
    expect(secrets.secret).toBe(true);
    const juno = one(rendered.map((r) => r.object), "StatefulSet", "juno").spec.template.spec.containers[0];
    expect(juno.env.filter((e: any) => e.valueFrom).map((e: any) => e.valueFrom.secretKeyRef.name)).toEqual(["rpcstack-secrets"]);
  });
});

describe("the gateway's configuration on a cluster", () => {
  it("resolves node names by libc once (the namespace's search domains, stable Service addresses), not by Docker's resolver; no ACME responder", () => {
    const cfg = planStack(kubeStack("testnet")).gatewayConfig.compiled.config;
    expect(cfg).not.toContain("127.0.0.11");
    expect(cfg).not.toMatch(/resolvers docker/);
    expect(cfg).not.toContain("acme:8888");
    expect(planStack(kubeStack("local")).gatewayConfig.compiled.config).toContain("init-addr last,libc,none");
  });
});
