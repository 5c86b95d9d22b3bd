/** AWS sizing, cost and boot configuration for a tier. Pure data; components/awsHost.ts applies it. */
import { stringify } from "yaml";
import { INSTANCE_TYPES, type Tier, type TierName } from "../config/index.js";

export interface AwsSizing {
  readonly instanceType: string;
  readonly dataVolume: { readonly sizeGiB: number; readonly iops: number; readonly throughputMiBps: number };
  readonly rootVolumeGiB: number;
}

/**
 * Chosen per tier: current-generation x86_64 general purpose (m7i) at the tier's cores and memory.
 * The data volume is gp3 at the tier's disk size. Snap sync and Juno's state writes are random
 * I/O bound: gp3's 3000 IOPS / 125 MiB/s baseline makes the first sync take days longer, so the
 * minimum tier provisions 6000 IOPS / 250 MiB/s and the recommended tier 10000 IOPS / 500 MiB/s.
 */
export const AWS_SIZING: Readonly<Record<TierName, AwsSizing>> = {
  minimum: { instanceType: "m7i.large", dataVolume: { sizeGiB: 600, iops: 6000, throughputMiBps: 250 }, rootVolumeGiB: 30 },
  recommended: { instanceType: "m7i.xlarge", dataVolume: { sizeGiB: 2000, iops: 10000, throughputMiBps: 500 }, rootVolumeGiB: 30 },
};

/** What the deployed nodes need (config/sizing.ts) and the operator's `host.diskGB` / `host.diskIops`. */
export interface AwsNeeds {
  readonly diskGB?: number;
  readonly diskIops?: number;
  /** From the resource table: the most any deployed node asks for. */
  readonly iops?: number;
  readonly throughputMBps?: number;
  readonly memoryGiB?: number;
}

/** Memory-optimised, non-burstable types at the tier's cores, for nodes whose memory adds up past the m7i type. */
const MORE_MEMORY: Readonly<Record<TierName, string>> = { minimum: "r7i.large", recommended: "r7i.xlarge" };

export function awsSizing(tier: Tier, instanceTypeOverride?: string, needs: AwsNeeds = {}): AwsSizing {
  // Config keeps devnet on the local host (rpcstack:host.kind must be local there).
  if (tier.name === "devnet") throw new Error("network devnet runs on the local host only; it has no AWS sizing");
  const base = AWS_SIZING[tier.name];
  const roomy = needs.memoryGiB !== undefined && needs.memoryGiB > INSTANCE_TYPES[base.instanceType].memoryGiB;
  const v = base.dataVolume;
  return {
    ...base,
    // Never a t3: a burstable type runs out of CPU credits during a sync and crawls.
    instanceType: instanceTypeOverride ?? (roomy ? MORE_MEMORY[tier.name] : base.instanceType),
    dataVolume: {
      sizeGiB: needs.diskGB ?? v.sizeGiB,
      iops: needs.diskIops ?? needs.iops ?? v.iops,
      // gp3 takes MiB/s (the table gives MB/s), at most 1000.
      throughputMiBps: needs.throughputMBps === undefined ? v.throughputMiBps : Math.min(1000, Math.ceil(needs.throughputMBps / 1.048576)),
    },
  };
}

/**
 * On-demand list prices, us-east-1, USD, as AWS published them (prices taken 2024-06; other
 * regions cost up to ~25% more). An estimate for planning, not a bill.
 */
export const AWS_PRICES = {
  date: "2024-06",
  region: "us-east-1",
  hoursPerMonth: 730,
  instancePerHour: {
    "m7i.large": 0.1008, "m7i.xlarge": 0.2016, "m7i.2xlarge": 0.4032, "m7i.4xlarge": 0.8064,
    "m6i.large": 0.096, "m6i.xlarge": 0.192, "m6i.2xlarge": 0.384,
    "r7i.large": 0.1323, "r7i.xlarge": 0.2646, "r7i.2xlarge": 0.5292,
    "c7i.large": 0.08925, "c7i.xlarge": 0.1785, "c7i.2xlarge": 0.357,
    "t3.medium": 0.0416, "t3.large": 0.0832, "t3.xlarge": 0.1664,
  } as Record<string, number>,
  gp3PerGiBMonth: 0.08,
  gp3PerIopsMonthAbove3000: 0.005,
  gp3PerMiBpsMonthAbove125: 0.04,
  publicIpv4PerHour: 0.005,
} as const;

export interface CostEstimate {
  readonly instance: number;
  readonly dataVolume: number;
  readonly rootVolume: number;
  readonly publicIp: number;
  readonly totalUsdPerMonth: number;
  readonly basis: string;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function monthlyCost(s: AwsSizing): CostEstimate {
  const p = AWS_PRICES;
  const hourly = p.instancePerHour[s.instanceType];
  if (hourly === undefined) throw new Error(`no price for instance type ${s.instanceType}`);
  const instance = hourly * p.hoursPerMonth;
  const v = s.dataVolume;
  const dataVolume =
    v.sizeGiB * p.gp3PerGiBMonth +
    Math.max(0, v.iops - 3000) * p.gp3PerIopsMonthAbove3000 +
    Math.max(0, v.throughputMiBps - 125) * p.gp3PerMiBpsMonthAbove125;
  const rootVolume = s.rootVolumeGiB * p.gp3PerGiBMonth;
  const publicIp = p.publicIpv4PerHour * p.hoursPerMonth;
  return {
    instance: round2(instance),
    dataVolume: round2(dataVolume),
    rootVolume: round2(rootVolume),
    publicIp: round2(publicIp),
    totalUsdPerMonth: round2(instance + dataVolume + rootVolume + publicIp),
    basis: `on-demand list prices, ${p.region}, ${p.date}`,
  };
}

/** Ports open to the internet on an aws host. Everything else stays closed. */
export const PUBLIC_PORTS: readonly { readonly port: number; readonly protocol: "tcp" | "udp"; readonly why: string }[] = [
  { port: 443, protocol: "tcp", why: "TLS gateway" },
  { port: 80, protocol: "tcp", why: "ACME HTTP-01, redirect to HTTPS" },
  { port: 30303, protocol: "tcp", why: "geth p2p" },
  { port: 30303, protocol: "udp", why: "geth p2p discovery" },
  { port: 9000, protocol: "tcp", why: "Lighthouse p2p" },
  { port: 9000, protocol: "udp", why: "Lighthouse p2p discovery" },
  { port: 9001, protocol: "udp", why: "Lighthouse QUIC" },
];

/** Where the data volume is mounted: Docker's data root, so every named volume lives on it. */
export const DATA_MOUNT = "/var/lib/docker";
export const ADMIN_USER = "admin";

/**
 * cloud-init user data: wait for the EBS data volume, format it only if it carries no
 * filesystem (never on a re-attach), mount it at Docker's data root, then install Docker from
 * Debian's packages and let the admin user drive it (the Docker provider connects over SSH).
 */
export function cloudInitUserData(dataVolumeId: string): string {
  const serial = dataVolumeId.replace("-", "");
  const mountScript = [
    "#!/bin/sh",
    "set -eu",
    `dev=/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_${serial}`,
    "i=0",
    'while [ ! -e "$dev" ]; do',
    "  i=$((i+1)); [ $i -gt 120 ] && { echo \"data volume $dev did not appear\" >&2; exit 1; }",
    "  sleep 5",
    "done",
    'if ! blkid "$dev" >/dev/null 2>&1; then mkfs.ext4 -L rpcstack-data "$dev"; fi',
    `mkdir -p ${DATA_MOUNT}`,
    `grep -q ' ${DATA_MOUNT} ' /etc/fstab || echo "LABEL=rpcstack-data ${DATA_MOUNT} ext4 defaults,nofail,noatime 0 2" >> /etc/fstab`,
    `mountpoint -q ${DATA_MOUNT} || mount ${DATA_MOUNT}`,
    "",
  ].join("\n");
  const doc = {
    package_update: true,
    write_files: [{ path: "/usr/local/sbin/rpcstack-mount-data", permissions: "0755", owner: "root:root", content: mountScript }],
    runcmd: [
      ["/usr/local/sbin/rpcstack-mount-data"],
      ["sh", "-c", "DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io"],
      ["systemctl", "enable", "--now", "docker"],
      ["usermod", "-aG", "docker", ADMIN_USER],
    ],
  };
  return `#cloud-config\n${stringify(doc, { lineWidth: 0 })}`;
}

export { INSTANCE_TYPES };
