/**
 * The Kubernetes objects the plan renders to, as plain data. `C` is a file's or a secret's content:
 * a string in tests, a Pulumi input in the component. Only the fields rpcstack writes are typed.
 */
export interface Metadata {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
}

export interface K8sObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Metadata;
  readonly [field: string]: unknown;
}

/** One object and how it is deployed. */
export interface Rendered {
  readonly object: K8sObject;
  /** Objects (by kind/name) it is created after: the previous node of its layer, the rollout order. */
  readonly after: readonly string[];
  /** Its content holds a secret (a Secret's stringData): kept encrypted in state. */
  readonly secret?: boolean;
  /** Files or secrets it mounts (ConfigMap or Secret names): a change of theirs rolls its pods. */
  readonly mounts?: readonly string[];
}

export const ref = (o: Pick<K8sObject, "kind" | "metadata">) => `${o.kind}/${o.metadata.name}`;

/** Labels every object carries; the selector label picks a workload's pods. */
export const PART_OF = { "app.kubernetes.io/part-of": "rpcstack" } as const;
export const WORKLOAD_LABEL = "rpcstack.io/workload";
export const LAYER_LABEL = "rpcstack.io/layer";
/**
 * On a Service that is scraped: the job and the target labels rpcstack's own Prometheus gives it
 * (monitoring/targets.ts), `metrics.rpcstack.io/<name>`, for the cluster's Prometheus to map onto the
 * series (docs/kubernetes.md: one labelmap rule); the dashboards read them.
 */
export const SCRAPE_LABEL_PREFIX = "metrics.rpcstack.io/";
/** The pod template annotation whose change rolls a workload's pods when its files change. */
export const FILES_DIGEST = "rpcstack.io/files-digest";
