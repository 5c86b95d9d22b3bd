/**
 * Rolling upgrades of a layer served by several nodes. After each node but the last, a one-shot
 * step waits until that node is in rotation (rpcstack-ready --await: synced and within the
 * tolerance of the best head among its layer's nodes, for longer than the gateway takes to see it),
 * and the next node's containers start only after the step exited 0. The step carries a digest
 * of its node's containers, so it runs again exactly when they change: a new image or flag
 * replaces node 1, waits for it, then replaces node 2, and so on. Compose runs the same steps
 * (depends_on: service_completed_successfully), and Pulumi orders the same graph (dependsOn).
 * On a first deployment no node serves yet, and each step passes at once. Pure.
 */
import { createHash } from "node:crypto";
import type { StackSettings } from "../config/index.js";
import type { L1Role } from "./l1.js";
import type { L2Role } from "./l2.js";
import { placedNodes, servedBySeveral, type PlacedNode, type PlacedNodes } from "./nodes.js";
import { READINESS_PROGRAM, ruleArgs } from "./readiness.js";
import type { ServiceSpec } from "./types.js";

/**
 * How long a node must stay in rotation before the next goes: twice what the gateway's checks
 * take to bring a node back (GatewayHosting.nodeBackSeconds), and two seconds.
 */
export const rolloutHoldSeconds = (nodeBackSeconds: number): number => 2 * nodeBackSeconds + 2;

/** The variable whose value changes with the node's containers, so the step runs again after they do. */
export const REVISION_VARIABLE = "RPCSTACK_ROLLOUT_AFTER";

/** The node's long-running containers (what a new image or flag replaces). */
const longRunning = (n: PlacedNode): ServiceSpec[] => Object.values(n.role.services).filter((s): s is ServiceSpec => s !== undefined && s.restart !== "no" && s.name !== "indexer");

/** What reaches the container: what the spec tells Prometheus and the sizing changes no container, so it runs no step again. */
const deployed = ({ client: _, ...s }: ServiceSpec) => ({ ...s, ports: s.ports.map(({ metrics: _m, ...p }) => p) });

/** A digest of the node's containers as they are specified. */
export const revision = (n: PlacedNode): string => createHash("sha256").update(JSON.stringify(longRunning(n).map(deployed))).digest("hex").slice(0, 16);

/** The step after node `n` of its layer. */
export function rolloutStep(settings: StackSettings, n: PlacedNode, holdSeconds: number): ServiceSpec {
  const layer = n.slot.layer;
  return {
    name: `rollout-${n.name}`,
    containerName: `rpcstack-rollout-${n.name}`,
    image: settings.readiness.image,
    command: [
      "node", READINESS_PROGRAM.path, ...ruleArgs(settings, [layer]),
      "--await", `${layer}/${n.name}`, "--hold-seconds", String(holdSeconds),
      "--timeout-minutes", String(settings.readiness.timeoutMinutes), "--interval-seconds", "1",
    ],
    environment: { [REVISION_VARIABLE]: revision(n) },
    ports: [],
    volumes: [],
    files: [READINESS_PROGRAM],
    restart: "no",
    user: "1000:1000",
    stopGraceSeconds: 10,
    dependsOn: longRunning(n).map((s) => ({ service: s.name, condition: "service_started" as const })),
  };
}

/** Node `n`'s role with its step added, and its every container (its JWT init too) after the previous node's step. */
function withSteps(n: PlacedNode, step: ServiceSpec | undefined, after: ServiceSpec | undefined): PlacedNode {
  const wait = after ? [{ service: after.name, condition: "service_completed_successfully" as const }] : [];
  const services = Object.fromEntries(Object.entries(n.role.services).map(([k, s]) => [k, s && s.name !== "indexer" ? { ...s, dependsOn: [...s.dependsOn, ...wait] } : s]));
  const role = { ...n.role, services: { ...services, ...(step ? { rollout: step } : {}) } } as L1Role | L2Role;
  return { ...n, role };
}

/** Every node, with the steps of rolling upgrades wired in where a layer has several (`nodeBackSeconds`: GatewayHosting's). */
export function rolledNodes(settings: StackSettings, nodeBackSeconds: number, nodes: PlacedNodes = placedNodes(settings)): PlacedNodes {
  const roll = (layer: "l1" | "l2") => {
    if (!servedBySeveral(settings, layer)) return nodes[layer];
    const steps = nodes[layer].map((n, i) => (i < nodes[layer].length - 1 ? rolloutStep(settings, n, rolloutHoldSeconds(nodeBackSeconds)) : undefined));
    return nodes[layer].map((n, i) => withSteps(n, steps[i], i > 0 ? steps[i - 1] : undefined));
  };
  return { l1: roll("l1"), l2: roll("l2") };
}
