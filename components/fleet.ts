/**
 * Every node of the stack on its host (services/nodes.ts), in the order a rolling upgrade needs:
 * each layer's nodes one after the other, node i+1's containers after node i's rollout step has
 * passed (RolloutStep, on the gateway's host). A layer's first node keeps the resource names a
 * single-node stack always had; each host's first L1 node creates that host's private network.
 */
import type * as docker from "@pulumi/docker";
import type * as pulumi from "@pulumi/pulumi";
import { MAIN_HOST } from "../config/index.js";
import type { StackPlan } from "../plan/index.js";
import type { L1Role, L2Role, PlacedNode } from "../services/index.js";
import { createContainers } from "./dockerServices.js";
import type { Host } from "./host.js";
import { L1Node } from "./l1Node.js";
import { L2Node } from "./l2Node.js";
import { RolloutStep } from "./rolloutStep.js";

export interface FleetArgs {
  readonly plan: StackPlan;
  /** Every host by name, the stack's own (`main`) included. */
  readonly hosts: ReadonlyMap<string, Host>;
  /** An external L1's URLs (a Pulumi secret), for the L2 nodes' `secretEnvironment`. */
  readonly secrets?: pulumi.Output<Readonly<Record<string, string>>>;
}

export interface Fleet {
  readonly l1: readonly L1Node[];
  readonly l2: readonly L2Node[];
  readonly steps: readonly RolloutStep[];
  /** The private Docker network of each host. */
  readonly networks: ReadonlyMap<string, pulumi.Input<string>>;
  /** The nodes' data volumes per host, by spec key: each host's disk watcher mounts its own. */
  readonly volumes: ReadonlyMap<string, ReadonlyMap<string, docker.Volume>>;
  /** Every node container, on whatever host: what the readiness check waits for. */
  readonly containers: readonly docker.Container[];
}

/** `rpcstack-l1` for a layer's first node, `rpcstack-l1-2` for its second. */
const componentName = (name: string, n: PlacedNode) => `${name}-${n.slot.layer}${n.slot.suffix}`;

export function deployFleet(name: string, args: FleetArgs, parent: pulumi.Resource): Fleet {
  const { plan } = args;
  const providerOf = (host: string) => args.hosts.get(host)!.dockerProvider;
  const known = new Map<string, pulumi.Input<pulumi.Resource>>();
  const networks = new Map<string, pulumi.Input<string>>();
  const volumes = new Map<string, Map<string, docker.Volume>>();
  const keep = (host: string, v: ReadonlyMap<string, docker.Volume>) => volumes.set(host, new Map([...(volumes.get(host) ?? []), ...v]));
  const steps: RolloutStep[] = [];
  /** The step the node's every resource waits for: the previous node's of its layer. */
  const previous = (n: PlacedNode): pulumi.Input<pulumi.Resource>[] => {
    const before = (n.slot.layer === "l1" ? plan.nodes.l1 : plan.nodes.l2)[n.slot.index - 1];
    const step = before?.role.services.rollout && known.get(before.role.services.rollout.name);
    return step ? [step] : [];
  };
  const stepAfter = (n: PlacedNode) => {
    const step = n.role.services.rollout;
    if (!step) return;
    // Run where every node is reached: the gateway's host, on its network.
    const s = new RolloutStep(`${name}-after-${n.name}`, { service: step, provider: providerOf(MAIN_HOST), networkName: networks.get(MAIN_HOST)!, known }, { parent });
    known.set(step.name, s.passed);
    steps.push(s);
  };

  // With an external L1 no L1 node runs; the stack's host still needs its network.
  const l1Placed = plan.nodes.l1.length ? plan.nodes.l1 : [{ slot: { layer: "l1", index: 0, suffix: "", host: MAIN_HOST, portOffset: 0 }, role: plan.l1 } as PlacedNode];
  const l1 = l1Placed.map((n) => {
    const node = new L1Node(componentName(name, n), { role: n.role as L1Role, provider: providerOf(n.slot.host), networkName: networks.get(n.slot.host), known, after: previous(n) }, { parent });
    if (!networks.has(n.slot.host)) networks.set(n.slot.host, node.networkName);
    keep(n.slot.host, node.volumes);
    for (const [service, c] of node.byService) known.set(service, c);
    stepAfter(n);
    return node;
  });
  const l2 = plan.nodes.l2.map((n) => {
    const role = n.role as L2Role;
    const follows = n.follows ? l1.find((x) => x.byService.has(n.follows!))?.byService.get(n.follows) : undefined;
    const node = new L2Node(
      componentName(name, n),
      { role, provider: providerOf(n.slot.host), networkName: networks.get(n.slot.host)!, l1: follows, secrets: args.secrets, known, after: previous(n) },
      { parent },
    );
    keep(n.slot.host, node.volumes);
    known.set(role.services.node.name, node.container);
    stepAfter(n);
    return node;
  });

  // A further host's own disk watcher, over the volumes of its nodes, once they run.
  const onHost = (host: string) => [...l1.filter((_, i) => l1Placed[i].slot.host === host).flatMap((x) => x.containers), ...l2.filter((_, i) => plan.nodes.l2[i].slot.host === host).map((x) => x.container)];
  for (const h of plan.hosts) {
    const ctx = { parent, prefix: `${name}-${h.host}`, provider: providerOf(h.host), networkName: networks.get(h.host)!, dependsOn: onHost(h.host) };
    createContainers(ctx, h.services, volumes.get(h.host) ?? new Map());
  }

  return {
    l1,
    l2,
    steps,
    networks,
    volumes,
    containers: [...l1.flatMap((x) => x.containers), ...l2.map((x) => x.container)],
  };
}
