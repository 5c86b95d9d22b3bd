/**
 * Every node of the stack, layer by layer, as config/placement.ts places them: its slot, its
 * containers and volumes, the name checks and metrics know it by, and where the readiness
 * service and the gateway reach it. A layer's first node is the one a single-node stack has. Pure.
 */
import { LAYERS, MAIN_HOST, l1SlotFor, nodeSlots, type Layer, type NodeSlot, type StackSettings } from "../config/index.js";
import { l1Reach, l1Role, type L1Role } from "./l1.js";
import { l2Role, l2Urls, type L2Role } from "./l2.js";
import { FIRST, named } from "./slots.js";
import type { VolumeSpec } from "./types.js";

export interface PlacedNode {
  readonly slot: NodeSlot;
  readonly role: L1Role | L2Role;
  /** Its name among its layer's nodes: its client's service (geth, geth-2, juno-2). */
  readonly name: string;
  /** JSON-RPC over HTTP and WebSocket where the gateway's host reaches it. */
  readonly rpcHttp: string;
  readonly rpcWs: string;
  /** The node's own readiness endpoint, where the gateway's host reaches it (Juno, Pathfinder). */
  readonly nodeReady?: string;
  /** Its chain-data volumes (the JWT's 64 bytes are not watched). */
  readonly dataVolumes: readonly VolumeSpec[];
  /** An L2 node: the L1 node it follows (its execution client's service, on the same host). */
  readonly follows?: string;
}

export type PlacedNodes = Readonly<Record<Layer, readonly PlacedNode[]>>;

function place(settings: StackSettings, slot: NodeSlot): PlacedNode {
  if (slot.layer === "l1") {
    const role = l1Role(settings, slot);
    const reach = l1Reach(settings, slot);
    return { slot, role, name: role.services.execution?.name ?? "l1", ...reach, dataVolumes: role.volumes.filter((v) => !v.key.startsWith("jwt")) };
  }
  const role = l2Role(settings, slot);
  const urls = l2Urls(settings, slot);
  const l1 = l1SlotFor(settings, slot);
  return { slot, role, name: role.services.node.name, rpcHttp: urls.rpcHttp, rpcWs: urls.rpcWs, nodeReady: urls.nodeReady, dataVolumes: role.volumes, ...(l1 ? { follows: named("geth", l1) } : {}) };
}

/** Each layer's nodes in order; an external L1 has none here. */
export function placedNodes(settings: StackSettings): PlacedNodes {
  const slots = nodeSlots(settings);
  const of = (layer: Layer) => slots.filter((x) => x.layer === layer).map((x) => place(settings, x));
  return { l1: of("l1"), l2: of("l2") };
}

/** A layer served by several nodes: its checks and metrics go node by node. */
export const servedBySeveral = (settings: Pick<StackSettings, "nodes">, layer: Layer): boolean => settings.nodes[layer].length > 1;

/** The layer's first node (a single-node stack's only one), as services/l1.ts and l2.ts build it by default. */
export const firstSlot = (layer: Layer): NodeSlot => FIRST[layer];

/** The nodes that run on one host. */
export const nodesOn = (nodes: PlacedNodes, host: string): PlacedNode[] => LAYERS.flatMap((l) => nodes[l].filter((n) => n.slot.host === host));

/** Whether the node runs on the stack's own host. */
export const onMainHost = (n: PlacedNode): boolean => n.slot.host === MAIN_HOST;
