/**
 * Adds up what the nodes a stack deploys on each host need (config/resources.ts) plus growth
 * headroom, and checks it against the disk the host has: its tier's, or its `diskGB`. Pure.
 */
import { keyName, problem } from "./errors.js";
import { MAIN_HOST, hostOf, hostsInUse, nodeSlots } from "./placement.js";
import { RESOURCES, SYSTEM_OVERHEAD_GB, diskAtSync, type ClientNeeds, type HistoryMode, type SizedClient } from "./resources.js";
import type { StackSettings } from "./types.js";

export interface NodeNeed {
  readonly client: SizedClient;
  readonly diskGB: number;
  readonly growthGBPerMonth: number;
  readonly memoryGiB: number;
}

export interface StackSizing {
  readonly nodes: readonly NodeNeed[];
  /** Disk at sync + images and logs + metrics + `headroomMonths` of growth. */
  readonly needGB: number;
  /** What Prometheus may keep (monitoring.retentionGB), on the stack's host. */
  readonly metricsGB: number;
  readonly growthGBPerMonth: number;
  /** What the host has: its `diskGB`, else its tier's disk. */
  readonly capacityGB: number;
  readonly capacityKey: "host.diskGB" | "tier";
  /** The key of that figure: ["tier"], ["host", "diskGB"], ["hosts", name, "tier"]... */
  readonly capacityPath: readonly string[];
  /** Sum of the nodes' minimum memory. */
  readonly memoryGiB: number;
  /** The most IOPS / throughput any deployed node asks for (gp3 floor: 3000 / 125). */
  readonly iops: number;
  readonly throughputMBps: number;
}

/** The clients a stack runs on a host, its own unless named (devnet's in-memory chains need no table). */
export function deployedClients(s: StackSettings, host = MAIN_HOST): SizedClient[] {
  if (s.network.dev || s.l2.client === "starknet-devnet") return [];
  const l2 = s.l2.client;
  return nodeSlots(s)
    .filter((x) => x.host === host)
    .flatMap((x): SizedClient[] => (x.layer === "l1" ? ["geth", "lighthouse"] : [l2]));
}

export function stackSizing(s: StackSettings, host = MAIN_HOST): StackSizing | undefined {
  const clients = deployedClients(s, host);
  // Devnet's chains live in memory (its clients list is empty); the guard narrows the name.
  if (!clients.length || s.network.name === "devnet") return undefined;
  const table = RESOURCES[s.network.name];
  const history: HistoryMode = s.l1.history ?? "all";
  // A restored database may be bigger than the table says: the operator's unpackedGB counts then.
  const restored = s.l2.snapshot?.unpackedGB ?? 0;
  const nodes = clients.map((client) => need(client, table[client], history)).map((n) => (n.client === s.l2.client && restored > n.diskGB ? { ...n, diskGB: restored } : n));
  const growth = sum(nodes.map((n) => n.growthGBPerMonth));
  const h = hostOf(s, host);
  const diskOverride = h.config.diskGB;
  // Prometheus runs beside the gateway, on the stack's own host.
  const metricsGB = host === MAIN_HOST ? (s.monitoring?.retentionGB ?? 0) : 0;
  return {
    nodes,
    needGB: sum(nodes.map((n) => n.diskGB)) + SYSTEM_OVERHEAD_GB + metricsGB + growth * s.headroomMonths,
    metricsGB,
    growthGBPerMonth: growth,
    capacityGB: diskOverride ?? h.tier.diskGB,
    capacityKey: diskOverride === undefined ? "tier" : "host.diskGB",
    capacityPath: host === MAIN_HOST ? (diskOverride === undefined ? ["tier"] : ["host", "diskGB"]) : [...h.key, diskOverride === undefined ? "tier" : "diskGB"],
    memoryGiB: sum(nodes.map((n) => n.memoryGiB)),
    iops: Math.max(3000, ...clients.map((c) => table[c].iops)),
    throughputMBps: Math.max(125, ...clients.map((c) => table[c].throughputMBps)),
  };
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);
const need = (client: SizedClient, n: ClientNeeds, history: HistoryMode): NodeNeed => ({
  client,
  diskGB: diskAtSync(n, client === "geth" ? history : "all"),
  growthGBPerMonth: n.growthGBPerMonth,
  memoryGiB: n.memoryGiB,
});

/** One problem per host too small, naming the need, the host's figure and the ways out; none when all fit. */
export function sizingProblems(s: StackSettings): string[] {
  // On a cluster each node's data is a claim of its own size (kubernetes/sizing.ts): no one disk to fill.
  if (s.host.kind === "kubernetes") return [];
  return hostsInUse(s).flatMap((host) => hostSizingProblem(s, host));
}

/**
 * The GB one client's chain data must hold on its host: its data at sync (or the restored
 * snapshot's) plus `headroomMonths` of growth. Undefined where no table sizes it (devnet).
 */
export function chainDataGB(s: StackSettings, client: SizedClient, host = MAIN_HOST): number | undefined {
  const need = stackSizing(s, host)?.nodes.find((n) => n.client === client);
  return need && Math.ceil(need.diskGB + need.growthGBPerMonth * s.headroomMonths);
}

/** "geth 1006 GB (history postmerge)", or "2 × geth ..." for a client a host runs twice. */
function nodeParts(s: StackSettings, nodes: readonly NodeNeed[]): string[] {
  const counts = new Map<SizedClient, number>();
  for (const n of nodes) counts.set(n.client, (counts.get(n.client) ?? 0) + 1);
  return [...counts].map(([client, count]) => {
    const n = nodes.find((x) => x.client === client)!;
    const note = client === "geth" ? ` (history ${s.l1.history})` : client === s.l2.client && s.l2.snapshot ? ` (restored from a snapshot: ${s.l2.snapshot.unpackedFrom})` : "";
    return `${count > 1 ? `${count} × ` : ""}${client} ${n.diskGB} GB${note}`;
  });
}

function hostSizingProblem(s: StackSettings, host: string): string[] {
  const z = stackSizing(s, host);
  if (!z || z.needGB <= z.capacityGB) return [];
  const slots = nodeSlots(s).filter((x) => x.host === host);
  // The stack's host with one node per layer says it as it always has.
  const several = host !== MAIN_HOST || slots.length > new Set(slots.map((x) => x.layer)).size;
  const tierName = hostOf(s, host).tier.name;
  const has = z.capacityKey === "tier" ? `${host === MAIN_HOST ? "" : `host ${host}'s `}tier ${tierName}'s ${z.capacityGB} GB` : `the ${z.capacityGB} GB of rpcstack:${keyName(z.capacityPath)}`;
  const ways = [
    `a bigger tier or disk (rpcstack:${host === MAIN_HOST ? "tier, rpcstack:host.diskGB" : `hosts.${host}.tier, rpcstack:hosts.${host}.diskGB`})`,
    ...(several ? ["fewer nodes on this host, or a further host for some (rpcstack:nodes, rpcstack:hosts)"] : []),
    ...(!s.l1.external && s.l1.history !== "postprague" ? [`geth history pruning (rpcstack:l1.history: ${s.l1.history === "all" ? "postmerge or postprague" : "postprague"})`] : []),
    ...(!s.l1.external ? ["an external L1 (rpcstack:l1.external)"] : []),
    `fewer months of headroom (rpcstack:headroomMonths, now ${s.headroomMonths})`,
  ];
  const who = several ? `the ${slots.length} nodes rpcstack:nodes places on host ${host}` : "the nodes this stack deploys";
  return [
    problem(
      z.capacityPath,
      `${who} need ${z.needGB} GB of disk (${nodeParts(s, z.nodes).join(", ")}, ${SYSTEM_OVERHEAD_GB} GB of images and logs, ` +
        (z.metricsGB ? `${z.metricsGB} GB of metrics (rpcstack:monitoring.retentionGB), ` : "") +
        `and ${s.headroomMonths} months of growth at ${z.growthGBPerMonth} GB/month), more than ${has}. Ways out: ${ways.join("; ")}`,
    ),
  ];
}

/** Said during `pulumi up` when the nodes' minimum memory adds up to more than the host has. */
export function memoryWarning(z: StackSizing | undefined, hostMemoryGiB: number): string | undefined {
  if (!z || z.memoryGiB <= hostMemoryGiB) return undefined;
  return `the nodes' minimum memory adds up to ${z.memoryGiB} GiB (${z.nodes.map((n) => `${n.client} ${n.memoryGiB}`).join(", ")}), more than the host's ${hostMemoryGiB} GiB: expect swapping or an out-of-memory kill during sync`;
}
