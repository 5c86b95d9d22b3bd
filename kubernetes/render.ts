/**
 * The stack's plan as Kubernetes objects, in the order they are applied: the namespace (only with
 * createNamespace), then per
 * workload its files (ConfigMap, Secret), its Services and itself, then the gateway's disruption
 * budget and its way in (a LoadBalancer or NodePort Service, or an Ingress). Nothing secret is in a
 * ConfigMap: the key map, an external L1's URLs and a haproxy.cfg that names them go to Secrets.
 * Pure: file contents come through `content`, secrets through `secretValue`.
 */
import type { KubernetesHostConfig, StackSettings } from "../config/index.js";
import type { StackPlan } from "../plan/index.js";
import { placeFiles, type GeneratedFiles, type MetricsEndpoint, type PlacedFile, type PortSpec, type SecretName, type ServiceSpec } from "../services/index.js";
import { scrapeJobs } from "../monitoring/targets.js";
import { LAYER_LABEL, PART_OF, SCRAPE_LABEL_PREFIX, WORKLOAD_LABEL, ref, type K8sObject, type Rendered } from "./objects.js";
import { FILES_VOLUME, SECRET_FILES_VOLUME, container, fileKey, portName, uniquePorts, type FileMount } from "./pods.js";
import { SMALL, claimStorage, gatewayResources, nodeResources } from "./sizing.js";
import { renderPolicies, renderWayIn, type Add, type Meta } from "./access.js";
import { workloads, type Workload } from "./workloads.js";

export interface ClusterInput<C> {
  readonly plan: StackPlan;
  readonly settings: StackSettings;
  readonly host: KubernetesHostConfig;
  /** The generated sets: `gateway` (haproxy.cfg and its files) and `keys` (the key map, a secret). */
  readonly generated: GeneratedFiles<C>;
  /** A package file's or bundled program's content. */
  readonly content: (f: Extract<PlacedFile<C>, { from: "package" | "bundle" }>) => C;
  /** The value of a secretEnvironment name (an external L1's URL, the badge signing key). */
  readonly secretValue: (name: SecretName) => C;
}

export { GATEWAY_SERVICE } from "./access.js";
/**
 * What the provider waits for on a StatefulSet, in place of its own wait: Kubernetes provider
 * v4.25.0 (the release the module proxy serves) takes an update's first event, before the
 * controller has seen it, for a finished roll (pulumi/pulumi-kubernetes#4094, fixed after it):
 * `pulumi up` returned 5 s after a key change while the gateway still rolled. Its `waitFor`
 * conditions read the status only once `status.observedGeneration` is current.
 */
export const WAIT_FOR = "pulumi.com/waitFor";
const rolledOut = (replicas: number) => JSON.stringify([`jsonpath={.status.updatedReplicas}=${replicas}`, `jsonpath={.status.readyReplicas}=${replicas}`]);

/** On a Job's pod template: a digest of what it checks (Workload.runsFor). */
export const RUNS_FOR = "rpcstack.io/runs-for";
/** Values of the services' secretEnvironment names. */
export const SECRETS_NAME = "rpcstack-secrets";

export function renderCluster<C>(input: ClusterInput<C>): Rendered[] {
  const { settings: s, host } = input;
  const meta = (name: string, labels: Record<string, string> = {}) => ({
    name,
    namespace: host.namespace,
    labels: { ...PART_OF, ...labels },
    // Without a kubelet (or before the cluster has room) nothing would ever be ready.
    ...(host.awaitReady ? {} : { annotations: { "pulumi.com/skipAwait": "true" } }),
  });
  const out: Rendered[] = [];
  // The operator's namespace, unless the stack keeps no data (deleting a namespace deletes its claims);
  // a namespace of the stack's own comes first.
  const nsRef = `Namespace/${host.namespace}`;
  const add = (object: K8sObject, o: Omit<Rendered, "object"> = { after: [] }) =>
    out.push({ ...o, after: host.createNamespace && object.kind !== "Namespace" ? [nsRef, ...o.after] : o.after, object });
  if (host.createNamespace) {
    const ns = meta(host.namespace);
    add({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns.name, labels: ns.labels, ...(ns.annotations ? { annotations: ns.annotations } : {}) } });
  }

  const all = workloads(input.plan, host.gatewayReplicas);
  const secretNames = new Set(all.flatMap((w) => [...w.inits, ...w.containers]).flatMap((x) => Object.values(x.secretEnvironment ?? {})));
  if (secretNames.size) {
    add({ apiVersion: "v1", kind: "Secret", metadata: meta(SECRETS_NAME), type: "Opaque", stringData: Object.fromEntries([...secretNames].map((n) => [n, input.secretValue(n)])) }, { after: [], secret: true });
  }
  const servicesSoFar = () => out.filter((r) => r.object.kind === "Service").map((r) => ref(r.object));
  // Who each metrics endpoint is, as rpcstack's own Prometheus names it ("host:port job" -> its labels).
  const scraped = new Map(scrapeJobs(s, input.plan).flatMap((j) => j.targets.map((t) => [`${t.address} ${j.name}`, { job: j.name, ...t.labels }] as const)));
  for (const w of all) renderWorkload(w, input, meta, add, servicesSoFar, scraped);
  // A drain takes at most one node of a layer served by several: the others keep its chain up.
  for (const layer of ["l1", "l2"] as const) {
    if (all.filter((w) => w.layer === layer).length < 2) continue;
    const labels = { "app.kubernetes.io/component": layer, [LAYER_LABEL]: layer };
    add({ apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: meta(`${layer}-nodes`, labels), spec: { maxUnavailable: 1, selector: { matchLabels: { [LAYER_LABEL]: layer } } } });
  }
  renderPolicies(all, host, meta, add);
  renderWayIn(s, host, meta, add);
  return out;
}


function renderWorkload<C>(w: Workload, input: ClusterInput<C>, meta: Meta, add: Add, servicesSoFar: () => string[], scraped: ReadonlyMap<string, Readonly<Record<string, string>>>) {
  const { settings: s, host } = input;
  const labels = { "app.kubernetes.io/name": w.name, "app.kubernetes.io/component": w.component, [WORKLOAD_LABEL]: w.name, ...(w.layer ? { [LAYER_LABEL]: w.layer } : {}) };
  const services = [...w.inits, ...w.containers];

  // Files: one ConfigMap and, for secret files, one Secret per workload, each file under its path's key.
  const plain: Record<string, C> = {};
  const secret: Record<string, C> = {};
  const modes: Record<string, number> = {};
  const mounts = new Map<string, FileMount[]>();
  const paths = new Map<string, string>();
  for (const svc of services) {
    mounts.set(
      svc.name,
      placeFiles(svc, input.generated).map((f) => {
        const key = fileKey(f.path);
        if (paths.has(key) && paths.get(key) !== f.path) throw new Error(`kubernetes: ${f.path} and ${paths.get(key)} of ${w.name} would share the key ${key}`);
        paths.set(key, f.path);
        const isSecret = f.from === "generated" && f.secret;
        (isSecret ? secret : plain)[key] = f.from === "generated" ? f.content : input.content(f);
        if (f.executable) modes[key] = 0o755;
        return { path: f.path, key, secret: isSecret };
      }),
    );
  }
  const filesName = `${w.name}-files`;
  const secretFilesName = `${w.name}-secret-files`;
  const mounted: string[] = [];
  if (Object.keys(plain).length) {
    add({ apiVersion: "v1", kind: "ConfigMap", metadata: meta(filesName, labels), data: plain });
    mounted.push(`ConfigMap/${filesName}`);
  }
  if (Object.keys(secret).length) {
    add({ apiVersion: "v1", kind: "Secret", metadata: meta(secretFilesName, labels), type: "Opaque", stringData: secret }, { after: [], secret: true });
    mounted.push(`Secret/${secretFilesName}`);
  }
  // Variables from a Secret are read when a container starts: a new value must roll the pods too.
  if (services.some((x) => Object.keys(x.secretEnvironment ?? {}).length)) mounted.push(`Secret/${SECRETS_NAME}`);

  // Volumes: chain data from claims, what a Docker volume shared between containers from an emptyDir.
  const claimKeys = new Set(w.claims.map((v) => v.key));
  const volumeKeys = [...new Set(services.flatMap((x) => x.volumes.map((m) => m.volume)))];
  const volumes = new Map(volumeKeys.map((k) => [k, k]));
  const items = (data: Record<string, C>) => Object.keys(data).map((key) => ({ key, path: key, ...(modes[key] ? { mode: modes[key] } : {}) }));
  const fromSecret = new Map(w.volumes.filter((v) => v.secret).map((v) => [v.key, v.secret!]));
  const podVolumes = [
    ...volumeKeys.filter((k) => !claimKeys.has(k) && !fromSecret.has(k)).map((k) => ({ name: k, emptyDir: {} })),
    ...volumeKeys.filter((k) => fromSecret.has(k)).map((k) => ({ name: k, secret: { secretName: fromSecret.get(k) } })),
    ...(Object.keys(plain).length ? [{ name: FILES_VOLUME, configMap: { name: filesName, items: items(plain), defaultMode: 0o644 } }] : []),
    ...(Object.keys(secret).length ? [{ name: SECRET_FILES_VOLUME, secret: { secretName: secretFilesName, items: items(secret), defaultMode: 0o644 } }] : []),
  ];
  const resources = (svc: ServiceSpec) =>
    svc.restart === "no" ? SMALL : w.component === "l1" || w.component === "l2" ? nodeResources(s, svc) : w.component === "gateway" && svc === w.containers[0] ? gatewayResources(input.plan.gatewayConfig.compiled.memoryMiB) : SMALL;
  const toContainer = (svc: ServiceSpec) => container(svc, { volumes, files: mounts.get(svc.name) ?? [], resources: resources(svc), secretName: SECRETS_NAME });

  // Services: each long-running service's name resolves as on the Docker network, also while its
  // pod is not ready (Lighthouse must reach a geth that is still syncing); the gateway's own checks
  // decide which node takes calls.
  const selector = { [WORKLOAD_LABEL]: w.name };
  const service = (name: string, ports: readonly PortSpec[], scrape?: Scrape & { readonly target: Readonly<Record<string, string>> }) => {
    const m = meta(name, { ...labels, ...Object.fromEntries(Object.entries(scrape?.target ?? {}).map(([k, v]) => [`${SCRAPE_LABEL_PREFIX}${k}`, v])) });
    add({
      apiVersion: "v1",
      kind: "Service",
      metadata: scrape ? { ...m, annotations: { ...m.annotations, ...scrapeAnnotations(scrape) } } : m,
      spec: { type: "ClusterIP", publishNotReadyAddresses: true, selector, ports: ports.map((p) => ({ name: portName(p), port: p.container, targetPort: p.container, protocol: p.protocol.toUpperCase() })) },
    });
  };
  for (const svc of w.containers.filter((x) => x.networkOf === undefined)) {
    const ports = uniquePorts(svc.ports.filter((p) => p.purpose !== "p2p"));
    if (!ports.length) continue;
    // The prometheus.io annotations name one port and path per Service: the first of what the
    // container serves goes on its own Service, each further one on a Service of its own.
    const [first, ...further] = scrapes(ports).map((x) => ({ ...x, target: scraped.get(`${svc.name}:${x.port.container} ${x.job}`) ?? unknownTarget(svc.name, x.port.container, x.job) }));
    service(svc.name, ports, first);
    for (const x of further) service(`${svc.name}-${x.job}`, [x.port], x);
  }

  const spread = w.layer ?? (w.replicas > 1 ? w.name : undefined);
  const podSpec = {
    automountServiceAccountToken: false,
    // No <SERVICE>_PORT=tcp://... variables: geth reads GETH_* as flags and would not start beside a
    // Service named geth (a real kubelet: "could not parse tcp://... from GETH_PORT"). Names are DNS's.
    enableServiceLinks: false,
    terminationGracePeriodSeconds: Math.max(...services.map((x) => x.stopGraceSeconds)),
    ...(w.inits.length ? { initContainers: w.inits.map(toContainer) } : {}),
    containers: w.containers.map(toContainer),
    ...(podVolumes.length ? { volumes: podVolumes } : {}),
    // OnRootMismatch: a terabyte claim is not walked and chowned at every start.
    ...(fsGroup(w) ? { securityContext: { fsGroup: fsGroup(w), fsGroupChangePolicy: "OnRootMismatch" } } : {}),
    ...(spread
      ? {
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 100, podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: w.layer ? { [LAYER_LABEL]: w.layer } : selector } } },
              ],
            },
          },
        }
      : {}),
  };
  const template = {
    metadata: { labels: { ...PART_OF, ...labels } },
    spec: podSpec,
  };
  // After every Service so far, its own among them: a name HAProxy cannot resolve when it starts stays
  // unresolved (init-addr none), and a node's client would look for its peers' names in vain.
  const after = [...(w.after ?? []).map((a) => `StatefulSet/${a}`), ...servicesSoFar()];
  if (w.kind === "Job") {
    add(
      {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: meta(w.name, labels),
        spec: {
          // Its program waits and retries itself (readiness.timeoutMinutes): a failure is the answer.
          backoffLimit: 0,
          template: {
            metadata: { ...template.metadata, annotations: { [RUNS_FOR]: w.runsFor ?? "" } },
            spec: { ...podSpec, restartPolicy: "Never" },
          },
        },
      },
      { after, mounts: mounted },
    );
  } else if (w.kind === "StatefulSet") {
    const m = meta(w.name, labels);
    add(
      {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: host.awaitReady ? { ...m, annotations: { [WAIT_FOR]: rolledOut(w.replicas) } } : m,
        spec: {
          serviceName: w.containers[0].name,
          replicas: w.replicas,
          podManagementPolicy: w.parallel ? "Parallel" : "OrderedReady",
          updateStrategy: { type: "RollingUpdate" },
          selector: { matchLabels: selector },
          template,
          // A synced chain is days of work: its claims outlive the StatefulSet unless retainData is false.
          persistentVolumeClaimRetentionPolicy: { whenDeleted: s.retainData ? "Retain" : "Delete", whenScaled: "Retain" },
          ...(w.claims.length
            ? {
                volumeClaimTemplates: w.claims.map((v) => ({
                  metadata: { name: v.key, labels: { ...PART_OF, "rpcstack.io/purpose": v.key } },
                  spec: { accessModes: ["ReadWriteOnce"], ...(host.storageClass ? { storageClassName: host.storageClass } : {}), resources: { requests: { storage: claimStorage(v) } } },
                })),
              }
            : {}),
        },
      },
      { after, mounts: mounted },
    );
  } else {
    add(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: meta(w.name, labels),
        spec: {
          replicas: w.replicas,
          // A replica goes only once its successor is ready: the gateway keeps serving through an update.
          strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
          selector: { matchLabels: selector },
          template,
        },
      },
      { after, mounts: mounted },
    );
  }
  if (w.replicas > 1) {
    add({ apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: meta(w.name, labels), spec: { maxUnavailable: 1, selector: { matchLabels: selector } } });
  }
}

const unknownTarget = (name: string, port: number, job: string): never => {
  throw new Error(`kubernetes: ${name}:${port} serves the metrics of job ${job}, which monitoring/targets.ts does not scrape`);
};

/** One metrics endpoint of a container, as the service's port and the job it is scraped as. */
interface Scrape extends MetricsEndpoint {
  readonly port: PortSpec;
}
const scrapes = (ports: readonly PortSpec[]): Scrape[] => ports.flatMap((port) => (port.metrics ?? []).map((m) => ({ ...m, port })));
/** What a cluster's Prometheus reads on a Service (its kubernetes-service-endpoints job). */
const scrapeAnnotations = (x: Scrape) => ({ "prometheus.io/scrape": "true", "prometheus.io/port": String(x.port.container), "prometheus.io/path": x.path });

/** A pod whose containers run as a non-root group writes its claims as that group. */
function fsGroup(w: Workload): number | undefined {
  if (!w.claims.length) return undefined;
  const g = w.containers.map((x) => x.user?.split(":")[1]).find((x) => x !== undefined && /^\d+$/.test(x));
  return g === undefined ? undefined : Number(g);
}
