/** Hardware tiers of the operator guide, and the EC2 instance types the package knows how to size. */

export type TierName = "minimum" | "recommended";

export interface Tier {
  /** A hardware tier, or `devnet`: what a trial chain needs (config/networks/devnet.ts). */
  readonly name: TierName | "devnet";
  readonly cores: number;
  readonly memoryGiB: number;
  readonly diskGB: number;
  readonly bandwidthMbps: number;
}

export const TIERS: Readonly<Record<TierName, Tier & { readonly name: TierName }>> = {
  minimum: { name: "minimum", cores: 2, memoryGiB: 4, diskGB: 600, bandwidthMbps: 8 },
  recommended: { name: "recommended", cores: 4, memoryGiB: 16, diskGB: 2000, bandwidthMbps: 25 },
};

export const TIER_NAMES = Object.keys(TIERS) as TierName[];

/**
 * Default byte budget of the gateway's response cache per tier (gateway.cache.maxBytes): a small
 * share of what the nodes leave. HAProxy's memory grows by up to about 2.5x the budget (Lua's
 * strings and tables, garbage between collections, malloc arenas: measured by bench/cache.ts).
 * The minimum tier's 4 GiB is already taken by geth, Lighthouse and the L2 node, so 64 MiB
 * (at most ~160 MB, 4%); the recommended tier's 16 GiB leaves a few GiB that the nodes use as
 * page cache, so 256 MiB (at most ~640 MB, 4%). A devnet chain is small: 64 MiB holds all of it.
 */
export const CACHE_BUDGET_BYTES: Readonly<Record<TierName | "devnet", number>> = {
  minimum: 64 * 1024 * 1024,
  recommended: 256 * 1024 * 1024,
  devnet: 64 * 1024 * 1024,
};

export interface InstanceType {
  readonly vcpus: number;
  readonly memoryGiB: number;
}

/**
 * x86_64 current-generation EC2 types an `instanceType` override may name. Kept short on purpose:
 * an unknown type cannot be checked against the tier, so it is rejected rather than trusted.
 */
export const INSTANCE_TYPES: Readonly<Record<string, InstanceType>> = {
  "m7i.large": { vcpus: 2, memoryGiB: 8 },
  "m7i.xlarge": { vcpus: 4, memoryGiB: 16 },
  "m7i.2xlarge": { vcpus: 8, memoryGiB: 32 },
  "m7i.4xlarge": { vcpus: 16, memoryGiB: 64 },
  "m6i.large": { vcpus: 2, memoryGiB: 8 },
  "m6i.xlarge": { vcpus: 4, memoryGiB: 16 },
  "m6i.2xlarge": { vcpus: 8, memoryGiB: 32 },
  "r7i.large": { vcpus: 2, memoryGiB: 16 },
  "r7i.xlarge": { vcpus: 4, memoryGiB: 32 },
  "r7i.2xlarge": { vcpus: 8, memoryGiB: 64 },
  "c7i.large": { vcpus: 2, memoryGiB: 4 },
  "c7i.xlarge": { vcpus: 4, memoryGiB: 8 },
  "c7i.2xlarge": { vcpus: 8, memoryGiB: 16 },
  "t3.medium": { vcpus: 2, memoryGiB: 4 },
  "t3.large": { vcpus: 2, memoryGiB: 8 },
  "t3.xlarge": { vcpus: 4, memoryGiB: 16 },
};

/** Why an instance type cannot carry a tier, or undefined when it can. */
export function instanceTypeShortfall(type: string, tier: Tier): string | undefined {
  const spec = INSTANCE_TYPES[type];
  if (!spec) {
    return `unknown instance type "${type}"; known types: ${Object.keys(INSTANCE_TYPES).join(", ")}`;
  }
  const short: string[] = [];
  if (spec.vcpus < tier.cores) short.push(`${spec.vcpus} vCPUs, tier ${tier.name} needs ${tier.cores}`);
  if (spec.memoryGiB < tier.memoryGiB) short.push(`${spec.memoryGiB} GiB memory, tier ${tier.name} needs ${tier.memoryGiB}`);
  return short.length ? `${type} has ${short.join(" and ")}` : undefined;
}
