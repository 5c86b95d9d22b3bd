/**
 * Which pod each service of the plan runs in on a cluster. Pure.
 * - Each node (geth with Lighthouse, or Juno) is a StatefulSet of one pod with its chain-data
 *   claims; a layer's nodes follow one another (the rollout order).
 * - The gateway is a StatefulSet of several replicas: HAProxy with the usage keeper beside it (it
 *   shares HAProxy's loopback, as on Docker), each replica's usage ledger in a claim of its own that
 *   outlives the pod; the first certificate is an init container. The replicas count quotas
 *   together in the counter store, a Deployment of one pod (its counts are published again by
 *   every keeper each second: nothing in it needs a claim).
 * - The sync health service, the indexer and the badge service are Deployments of one pod.
 * - One-shot services (a JWT made on the host, a snapshot restored) run as init containers.
 * - The one-shot sync check is a Job after every node: the provider waits for it as `pulumi up` waits
 *   for it on Docker (readiness.wait), and a change of any node's containers runs it again.
 * What has no place on a cluster is left out: the key sync (the key map is a mounted Secret; a change
 *   rolls the gateway's pods), the disk watchers (the kubelet reports volume use) and the rollout
 *   steps (the provider waits for each StatefulSet's pods to be ready).
 */
import { createHash } from "node:crypto";
import type { StackPlan } from "../plan/index.js";
import type { PlacedNode, ServiceSpec, VolumeSpec } from "../services/index.js";

export interface Workload {
  readonly name: string;
  readonly kind: "StatefulSet" | "Deployment" | "Job";
  /** app.kubernetes.io/component. */
  readonly component: "l1" | "l2" | "gateway" | "readiness" | "indexer" | "badges" | "counters";
  /** A node's layer: nodes of a layer are spread over the cluster's machines. */
  readonly layer?: "l1" | "l2";
  readonly replicas: number;
  readonly inits: readonly ServiceSpec[];
  readonly containers: readonly ServiceSpec[];
  /** Chain data: one claim each, from the StatefulSet's templates. */
  readonly claims: readonly VolumeSpec[];
  /** The volumes its containers mount: an emptyDir each, a claim or a Secret where the spec says so. */
  readonly volumes: readonly VolumeSpec[];
  /** The StatefulSets (by name) it is rolled out after. */
  readonly after?: readonly string[];
  /** A Job's: a digest of what it checks; a new one replaces the Job, which runs again. */
  readonly runsFor?: string;
  /** A StatefulSet whose pods start and stop together (the gateway's replicas), not one after another (a layer's nodes). */
  readonly parallel?: boolean;
}

const defined = (xs: readonly (ServiceSpec | undefined)[]) => xs.filter((x): x is ServiceSpec => x !== undefined);

function nodeWorkload(n: PlacedNode, previous: PlacedNode | undefined): Workload {
  const r = n.role.services as Readonly<Record<string, ServiceSpec | undefined>>;
  // The indexer follows a layer's first node from its own pod; rollout steps have no place here.
  const own = defined(Object.entries(r).filter(([k]) => k !== "indexer" && k !== "rollout").map(([, v]) => v));
  return {
    name: n.name,
    kind: "StatefulSet",
    component: n.slot.layer,
    layer: n.slot.layer,
    replicas: 1,
    inits: own.filter((x) => x.restart === "no"),
    containers: own.filter((x) => x.restart !== "no"),
    claims: n.dataVolumes,
    volumes: n.role.volumes,
    ...(previous ? { after: [previous.name] } : {}),
  };
}

const single = (svc: ServiceSpec, component: Workload["component"]): Workload => ({ name: svc.name, kind: "Deployment", component, replicas: 1, inits: [], containers: [svc], claims: [], volumes: [] });

export function workloads(plan: StackPlan, gatewayReplicas: number): Workload[] {
  const layer = (nodes: readonly PlacedNode[]) => nodes.map((n, i) => nodeWorkload(n, nodes[i - 1]));
  const g = plan.gateway.services;
  const sidecars = defined([g.usage, g.badges]).filter((x) => x.networkOf === g.haproxy.name);
  const badges = g.badges && g.badges.networkOf === undefined ? [single(g.badges, "badges")] : [];
  const indexer = plan.l2.services.indexer ? [single(plan.l2.services.indexer, "indexer")] : [];
  const counters = g.counters ? [single(g.counters, "counters")] : [];
  const nodes = [...layer(plan.nodes.l1), ...layer(plan.nodes.l2)];
  const check: Workload = {
    ...single(plan.readiness.services.check, "readiness"),
    kind: "Job",
    after: nodes.map((n) => n.name),
    runsFor: createHash("sha256").update(JSON.stringify(nodes.map((n) => [...n.inits, ...n.containers].map((c) => [c.image, c.entrypoint, c.command, c.environment])))).digest("hex").slice(0, 16),
  };
  return [
    ...nodes,
    single(plan.readiness.services.health, "readiness"),
    check,
    ...indexer,
    ...badges,
    ...counters,
    {
      name: "gateway", kind: "StatefulSet", component: "gateway", replicas: gatewayReplicas, parallel: true, inits: [g.certInit], containers: [g.haproxy, ...sidecars],
      // The usage ledger is what a provider bills from: each replica's outlives its pod.
      claims: plan.gateway.volumes.filter((v) => v.key === g.usage.volumes[0]?.volume),
      volumes: plan.gateway.volumes,
    },
  ];
}
