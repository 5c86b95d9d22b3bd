/**
 * What each node the package can deploy needs, per network: disk at sync, growth per month, memory
 * and disk I/O, each with its source and date. Pure data; config/sizing.ts adds it up and docs/sizing.md's
 * table is rendered from it (test/sizing.test.ts keeps them equal).
 *
 * Units: GB = 10^9 bytes (a source's GiB figure is converted, 1 GiB = 1.074 GB), memory in GiB
 * as clients state it. "Unverified" marks a figure not read in a primary source here.
 */
export type SizedClient = "geth" | "lighthouse" | "juno" | "pathfinder";
export type PublicNetwork = "mainnet" | "testnet";
/** geth `--history.chain` (go-ethereum v1.17.5 cmd/utils/flags.go: all, postmerge, postprague). */
export type HistoryMode = "all" | "postmerge" | "postprague";
export const HISTORY_MODES: readonly HistoryMode[] = ["all", "postmerge", "postprague"];

export interface ClientNeeds {
  /** Disk at sync; geth's depends on how much block history it keeps. */
  readonly diskGB: number | Readonly<Record<HistoryMode, number>>;
  readonly growthGBPerMonth: number;
  /** The client's own minimum; what the host must hold beside the other nodes. */
  readonly memoryGiB: number;
  /** gp3 IOPS / MB/s the node's sync wants (the most any deployed node asks for is provisioned). */
  readonly iops: number;
  readonly throughputMBps: number;
  /** Where each figure comes from, with its date. */
  readonly sources: string;
}

const AWS_ETH = "aws-samples/aws-blockchain-node-runners blueprints/ethereum";
const GETH_README = "go-ethereum v1.17.5 README (2026-07-27): minimum 8 GB RAM, recommended 16 GB+";
const LIGHTHOUSE_BOOK = "Lighthouse book installation.md (minimum 8 GB RAM; older edition)";
const JUNO_HW = "Juno docs/docs/hardware-requirements.md: 4 GB+ minimum, 8 GB recommended";
const gib = (n: number) => Math.ceil(n * 1.073741824);

export const RESOURCES: Readonly<Record<PublicNetwork, Readonly<Record<SizedClient, ClientNeeds>>>> = {
  mainnet: {
    geth: {
      // Pre-merge history is fixed in size, so postprague saves only a little more: unmeasured here.
      diskGB: { all: gib(1270), postmerge: gib(936), postprague: gib(936) },
      growthGBPerMonth: 50,
      memoryGiB: 8,
      iops: 8000,
      throughputMBps: 700,
      sources:
        `disk: ~1.27 TiB with all history, ~936 GiB post-merge (geth "History Pruning" docs, 2025; unverified here: figures from an earlier session's notes); ` +
        `growth and I/O: ${AWS_ETH} README (2026-08: mainnet full geth+Lighthouse ~2 TB, ~50 GB/month, gp3 8000 IOPS / 700 MB/s); memory: ${GETH_README}`,
    },
    lighthouse: {
      diskGB: 20,
      growthGBPerMonth: 1,
      memoryGiB: 8,
      iops: 0,
      throughputMBps: 0,
      sources: `disk: ~20 GiB (FACTS.md, unverified; a supernode keeps 50-100 GB more, ${AWS_ETH} README, not deployed here); growth: unverified estimate (finalized state is pruned); memory: ${LIGHTHOUSE_BOOK}; I/O: counted with geth`,
    },
    juno: {
      diskGB: gib(351),
      growthGBPerMonth: 28,
      memoryGiB: 4,
      iops: 3000,
      throughputMBps: 125,
      sources:
        `disk: mainnet snapshot 351 GiB in 2026-02 (earlier session's notes; unverified here), a lower bound (the snapshot is compressed); ` +
        `growth: from the snapshot's 195.13 GiB on 2025-08-26 (Juno docs/docs/snapshots.md) to 351 GiB six months later; memory: ${JUNO_HW}; I/O: gp3 baseline, no figure upstream`,
    },
    pathfinder: {
      diskGB: 500,
      growthGBPerMonth: 28,
      memoryGiB: 16,
      iops: 3000,
      throughputMBps: 125,
      sources: "disk and memory: Pathfinder README system requirements (4 cores, 16 GB, 500 GB SSD; earlier session's notes, unverified here); growth: Juno's (same chain, unverified); I/O: gp3 baseline",
    },
  },
  testnet: {
    geth: {
      // Sepolia merged at block 1,450,409 (go-ethereum core/history/historymode.go): post-merge keeps almost everything.
      diskGB: { all: 906, postmerge: 906, postprague: 496 },
      growthGBPerMonth: 5,
      memoryGiB: 8,
      iops: 3000,
      throughputMBps: 250,
      sources:
        `disk: ${AWS_ETH} samples/.env-sepolia-geth-lighthouse-full (measured 2026-10-02, geth 1.17.5: ~906 GB, ~670 GB of it block history; post-Prague ~570 GB with Lighthouse's 74 GB, so ~496 GB for geth); ` +
        `growth and I/O: the blueprint README (~5 GB/month, gp3 3000 IOPS / 250 MB/s; its ~100 GB size is out of date, so growth may be low); memory: ${GETH_README}`,
    },
    lighthouse: {
      diskGB: 74,
      growthGBPerMonth: 1,
      memoryGiB: 8,
      iops: 0,
      throughputMBps: 0,
      sources: `disk: 74 GB measured as a supernode (${AWS_ETH} Sepolia sample, 2026-10-02), an upper bound for the regular node deployed here; growth: unverified estimate; memory: ${LIGHTHOUSE_BOOK}`,
    },
    juno: {
      diskGB: gib(49.5),
      growthGBPerMonth: 3,
      memoryGiB: 4,
      iops: 3000,
      throughputMBps: 125,
      sources: `disk: Sepolia snapshot 49.5 GiB in 2026-02 (earlier session's notes; unverified here); growth: from 32.84 GiB on 2025-08-26 (Juno docs/docs/snapshots.md); memory: ${JUNO_HW}`,
    },
    pathfinder: {
      diskGB: gib(49.5),
      growthGBPerMonth: 3,
      memoryGiB: 16,
      iops: 3000,
      throughputMBps: 125,
      sources: "Juno's Sepolia figures (same chain; unverified for Pathfinder); memory: Pathfinder README (earlier session's notes)",
    },
  },
};

/** Images and rotated container logs on the same volume (Docker's data root). */
export const SYSTEM_OVERHEAD_GB = 20;

export function diskAtSync(needs: ClientNeeds, history: HistoryMode): number {
  return typeof needs.diskGB === "number" ? needs.diskGB : needs.diskGB[history];
}

/** docs/sizing.md's resource table, rendered from RESOURCES (test/sizing.test.ts keeps the page equal to it). */
export function resourceTableMarkdown(): string {
  const disk = (n: ClientNeeds) =>
    typeof n.diskGB === "number" ? `${n.diskGB}` : `${n.diskGB.all} all / ${n.diskGB.postmerge} postmerge / ${n.diskGB.postprague} postprague`;
  const rows = (Object.keys(RESOURCES) as PublicNetwork[]).flatMap((net) =>
    (Object.keys(RESOURCES[net]) as SizedClient[]).map((c) => {
      const n = RESOURCES[net][c];
      const io = n.iops ? `${n.iops} / ${n.throughputMBps}` : "with geth";
      return `| ${net} | ${c} | ${disk(n)} | ${n.growthGBPerMonth} | ${n.memoryGiB} | ${io} | ${n.sources} |`;
    }),
  );
  return [
    "| network | client | disk at sync (GB) | growth (GB/month) | memory (GiB) | gp3 IOPS / MB/s | sources |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "| devnet | geth --dev, Starknet Devnet | 0 (in memory) | 0 | 2 GB for the host | - | config/networks/devnet.ts |",
  ].join("\n");
}
