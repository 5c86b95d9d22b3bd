import type { Tier } from "../tiers.js";

export type NetworkName = "mainnet" | "testnet" | "devnet";
export type L2ClientName = "juno" | "pathfinder" | "starknet-devnet";
export type ChainKind = "evm" | "starknet" | "cosmos";

/** A chain the package serves from its own nodes. */
export interface BuiltInChain {
  /** Lowercase gateway path segment: /gateway/<path>/... */
  readonly path: string;
  /** Uppercase id client libraries use. */
  readonly chainId: string;
  readonly kind: ChainKind;
  readonly layer: "l1" | "l2";
}

/**
 * A chain made on the host for trying the package (geth --dev, Starknet Devnet): no peers, no
 * sync, blocks at a fixed pace. Never a public network.
 */
export interface DevChains {
  /** geth --dev.period: seconds between L1 blocks. */
  readonly l1BlockSeconds: number;
  /** Starknet Devnet --block-generation-on: seconds between L2 blocks. */
  readonly l2BlockSeconds: number;
  /** What the host needs instead of a hardware tier (the `tier` key does not apply). */
  readonly requirements: Tier;
  /** Printed by `pulumi up` and shown in README and docs/deploying.md: this is not a public network. */
  readonly banner: string;
}

/** Everything that differs between networks, in one typed value per network. */
export interface NetworkDefaults {
  readonly name: NetworkName;
  readonly l1: {
    /** geth `--<network>` flag and Lighthouse `--network` value; `dev` runs geth --dev. */
    readonly network: "mainnet" | "sepolia" | "dev";
    /** EIP-155 chain id, what `eth_chainId` returns. */
    readonly chainId: number;
    readonly executionImage: string;
    /** Absent when the network needs no consensus client (geth --dev makes its own blocks). */
    readonly consensusImage?: string;
    readonly checkpointSyncUrl?: string;
  };
  readonly l2: {
    /** What `starknet_chainId` returns: the short string SN_MAIN / SN_SEPOLIA, hex encoded. */
    readonly chainId: string;
    readonly junoNetwork?: "mainnet" | "sepolia";
    readonly pathfinderNetwork?: "mainnet" | "sepolia-testnet";
    /** The L2 clients that can run on this network; the first is the default. */
    readonly clients: readonly L2ClientName[];
    readonly images: Readonly<Partial<Record<L2ClientName, string>>>;
  };
  readonly indexer: { readonly image: string; readonly command: readonly string[] };
  readonly chains: { readonly l1: BuiltInChain; readonly l2: BuiltInChain };
  /** Present only for a local trial chain. */
  readonly dev?: DevChains;
}
