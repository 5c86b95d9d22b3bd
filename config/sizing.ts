/**
 * Adds up what the nodes a stack deploys need (config/resources.ts) plus growth headroom, and
 * checks it against the disk the stack has: the tier's, or `host.diskGB`. Pure.
 */
import { problem } from "./errors.js";
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
  /** Disk at sync + images and logs + `headroomMonths` of growth. */
  readonly needGB: number;
  readonly growthGBPerMonth: number;
  /** What the stack has: `host.diskGB`, else the tier's disk. */
  readonly capacityGB: number;
  readonly capacityKey: "host.diskGB" | "tier";
  /** Sum of the nodes' minimum memory. */
  readonly memoryGiB: number;
  /** The most IOPS / throughput any deployed node asks for (gp3 floor: 3000 / 125). */
  readonly iops: number;
  readonly throughputMBps: number;
}

/** The clients a stack runs on its own host (devnet's in-memory chains need no table). */
export function deployedClients(s: StackSettings): SizedClient[] {
  if (s.network.dev || s.l2.client === "starknet-devnet") return [];
  return [...(s.l1.external ? [] : (["geth", "lighthouse"] as const)), s.l2.client];
}

export function stackSizing(s: StackSettings): StackSizing | undefined {
  const clients = deployedClients(s);
  // Devnet's chains live in memory (its clients list is empty); the guard narrows the name.
  if (!clients.length || s.network.name === "devnet") return undefined;
  const table = RESOURCES[s.network.name];
  const history: HistoryMode = s.l1.history ?? "all";
  // A restored database may be bigger than the table says: the operator's unpackedGB counts then.
  const restored = s.l2.snapshot?.unpackedGB ?? 0;
  const nodes = clients.map((client) => need(client, table[client], history)).map((n) => (n.client === s.l2.client && restored > n.diskGB ? { ...n, diskGB: restored } : n));
  const growth = sum(nodes.map((n) => n.growthGBPerMonth));
  const diskOverride = s.host.diskGB;
  return {
    nodes,
    needGB: sum(nodes.map((n) => n.diskGB)) + SYSTEM_OVERHEAD_GB + growth * s.headroomMonths,
    growthGBPerMonth: growth,
    capacityGB: diskOverride ?? s.tier.diskGB,
    capacityKey: diskOverride === undefined ? "tier" : "host.diskGB",
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

/** One problem naming the need, the stack's figure and the ways out; none when it fits. */
export function sizingProblems(s: StackSettings): string[] {
  const z = stackSizing(s);
  if (!z || z.needGB <= z.capacityGB) return [];
  const note = (n: NodeNeed) => (n.client === "geth" ? ` (history ${s.l1.history})` : n.client === s.l2.client && s.l2.snapshot ? ` (restored from a snapshot: ${s.l2.snapshot.unpackedFrom})` : "");
  const parts = z.nodes.map((n) => `${n.client} ${n.diskGB} GB${note(n)}`);
  const has = z.capacityKey === "tier" ? `tier ${s.tier.name}'s ${z.capacityGB} GB` : `the ${z.capacityGB} GB of rpcstack:host.diskGB`;
  const ways = [
    "a bigger tier or disk (rpcstack:tier, rpcstack:host.diskGB)",
    ...(!s.l1.external && s.l1.history !== "postprague" ? [`geth history pruning (rpcstack:l1.history: ${s.l1.history === "all" ? "postmerge or postprague" : "postprague"})`] : []),
    ...(!s.l1.external ? ["an external L1 (rpcstack:l1.external)"] : []),
    `fewer months of headroom (rpcstack:headroomMonths, now ${s.headroomMonths})`,
  ];
  return [
    problem(
      z.capacityKey === "tier" ? ["tier"] : ["host", "diskGB"],
      `the nodes this stack deploys need ${z.needGB} GB of disk (${parts.join(", ")}, ${SYSTEM_OVERHEAD_GB} GB of images and logs, ` +
        `and ${s.headroomMonths} months of growth at ${z.growthGBPerMonth} GB/month), more than ${has}. Ways out: ${ways.join("; ")}`,
    ),
  ];
}

/** Said during `pulumi up` when the nodes' minimum memory adds up to more than the host has. */
export function memoryWarning(z: StackSizing | undefined, hostMemoryGiB: number): string | undefined {
  if (!z || z.memoryGiB <= hostMemoryGiB) return undefined;
  return `the nodes' minimum memory adds up to ${z.memoryGiB} GiB (${z.nodes.map((n) => `${n.client} ${n.memoryGiB}`).join(", ")}), more than the host's ${hostMemoryGiB} GiB: expect swapping or an out-of-memory kill during sync`;
}
