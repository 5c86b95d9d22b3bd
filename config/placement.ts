/**
 * Where the nodes run: each layer's nodes in order, each on the stack's host (`main`) or a
 * further host (`hosts.<name>`), as `nodes.l1` / `nodes.l2` list them. One stack places them all,
 * so one `pulumi up` orders their rolling replacement and one plan gives the gateway every node.
 * The rules on the raw config, and the slots the services are built from. Pure.
 */
import { problem } from "./errors.js";
import { isObj, isStr } from "./guards.js";
import { TIERS, instanceTypeShortfall } from "./tiers.js";
import type { ExtraHostConfig, HostConfig, RawConfig, StackSettings } from "./types.js";
import type { Tier } from "./tiers.js";

/** The stack's own host (`host`), as `nodes` names it. */
export const MAIN_HOST = "main";
/** The k-th node of a layer on one host publishes its ports moved by k times this. */
export const PORT_STEP = 100;

export type Layer = "l1" | "l2";
export const LAYERS: readonly Layer[] = ["l1", "l2"];

export interface NodeSlot {
  readonly layer: Layer;
  /** 0 for the layer's first node, which keeps the names a single node always had. */
  readonly index: number;
  /** Put after the client's name in service, container and volume names: "" for the first node, then "-2", "-3"... */
  readonly suffix: string;
  readonly host: string;
  /** Added to the host ports the node publishes: the k-th node of its layer on its host moves by k × PORT_STEP. */
  readonly portOffset: number;
}

/** Each layer's nodes, in order (none for an external L1). */
export function nodeSlots(s: StackSettings): NodeSlot[] {
  return LAYERS.flatMap((layer) => {
    const hosts = s.nodes[layer];
    return hosts.map((host, index) => ({
      layer,
      index,
      suffix: index === 0 ? "" : `-${index + 1}`,
      host,
      portOffset: PORT_STEP * hosts.slice(0, index).filter((h) => h === host).length,
    }));
  });
}

/** The L1 node an L2 node follows: one on its own host (the rules require one), spread by order. */
export function l1SlotFor(s: StackSettings, l2: NodeSlot): NodeSlot | undefined {
  const slots = nodeSlots(s);
  const here = slots.filter((x) => x.layer === "l1" && x.host === l2.host);
  if (!here.length) return undefined;
  const k = slots.filter((x) => x.layer === "l2" && x.host === l2.host).findIndex((x) => x.index === l2.index);
  return here[k % here.length];
}

/** The hosts nodes run on, the stack's own first. */
export const hostsInUse = (s: StackSettings): string[] => [MAIN_HOST, ...Object.keys(s.hosts).filter((h) => nodeSlots(s).some((x) => x.host === h))];

/** Whether the stack runs nodes beyond its own host. */
export const spansHosts = (s: StackSettings): boolean => nodeSlots(s).some((x) => x.host !== MAIN_HOST);

/** A host's settings and the tier it is checked against (`host.diskGB` or `hosts.<name>.diskGB` standing for the tier's disk). */
export function hostOf(s: StackSettings, name: string): { readonly config: HostConfig; readonly tier: Tier; readonly key: readonly string[] } {
  if (name === MAIN_HOST) return { config: s.host, tier: s.tier, key: ["host"] };
  const h: ExtraHostConfig = s.hosts[name];
  return { config: h, tier: h.tier, key: ["hosts", name] };
}

const listed = (xs: readonly string[]) => xs.join(", ");

/** Rules the schema cannot say: every node on a declared host, nodes where they can run, hosts that are used. */
export function placementProblems(raw: RawConfig): string[] {
  const out: string[] = [];
  const hosts = isObj(raw.hosts) ? raw.hosts : {};
  const nodes = isObj(raw.nodes) ? raw.nodes : {};
  const declared = [MAIN_HOST, ...Object.keys(hosts).filter((h) => h !== MAIN_HOST)];
  const external = isObj(raw.l1) && raw.l1.external !== undefined;
  const dev = raw.network === "devnet";
  if (Object.hasOwn(hosts, MAIN_HOST)) out.push(problem(["hosts", MAIN_HOST], "is the stack's own host (rpcstack:host); name further hosts otherwise"));
  if (dev && Object.keys(hosts).length) out.push(problem(["hosts"], "does not apply to network devnet: it is a private trial chain for this machine"));
  const placed = (layer: Layer): string[] => (Array.isArray(nodes[layer]) ? (nodes[layer] as unknown[]).filter(isStr) : []);
  const l1 = external ? [] : nodes.l1 === undefined ? [MAIN_HOST] : placed("l1");
  const l2 = nodes.l2 === undefined ? [MAIN_HOST] : placed("l2");
  if (external && nodes.l1 !== undefined) out.push(problem(["nodes", "l1"], "does not apply with rpcstack:l1.external: the stack deploys no L1 node"));
  for (const layer of LAYERS) {
    placed(layer).forEach((h, i) => {
      if (!declared.includes(h)) out.push(problem(["nodes", layer, i], `host "${h}" is not declared (declared: ${listed(declared)}); add it under rpcstack:hosts`));
    });
    if (dev && placed(layer).length > 1) {
      out.push(problem(["nodes", layer], `network devnet runs one node per chain: each geth --dev and each Starknet Devnet makes a chain of its own, so two would answer differently`));
    }
  }
  if (!external) {
    l2.forEach((h, i) => {
      if (declared.includes(h) && !l1.includes(h)) {
        out.push(problem(["nodes", "l2", i], `runs on host "${h}", where no L1 node runs (rpcstack:nodes.l1 places them on ${listed([...new Set(l1)]) || "no host"}): an L2 node follows an L1 node on its own host`));
      }
    });
  }
  for (const h of Object.keys(hosts)) {
    if (h !== MAIN_HOST && !l1.includes(h) && !l2.includes(h)) out.push(problem(["hosts", h], "no node is placed on it: rpcstack:nodes.l1 and nodes.l2 list the hosts nodes run on"));
  }
  const remote = [...l1, ...l2].some((h) => h !== MAIN_HOST && declared.includes(h));
  if (remote && !(isObj(raw.host) && "privateAddress" in raw.host && raw.host.privateAddress !== undefined)) {
    out.push(problem(["host", "privateAddress"], "is required once nodes run on further hosts (rpcstack:hosts): their health checks reach this host's readiness service there"));
  }
  for (const [name, h] of Object.entries(hosts)) {
    if (!isObj(h) || h.kind !== "aws" || !isStr(h.instanceType)) continue;
    const tierName = isStr(h.tier) ? h.tier : raw.tier;
    if (isStr(tierName) && tierName in TIERS) {
      const short = instanceTypeShortfall(h.instanceType, TIERS[tierName as keyof typeof TIERS]);
      if (short) out.push(problem(["hosts", name, "instanceType"], `${short} (its tier is ${tierName})`));
    }
  }
  return out;
}

/** Whether any host of the stack (its own or a further one) is of this kind. */
export const anyHostOfKind = (raw: RawConfig, kind: string): boolean =>
  (isObj(raw.host) && raw.host.kind === kind) || Object.values(isObj(raw.hosts) ? raw.hosts : {}).some((h) => isObj(h) && h.kind === kind);
