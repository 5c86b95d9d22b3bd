export type NetworkName = "mainnet" | "testnet";
export type L2ClientName = "juno" | "pathfinder";
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

/** Everything that differs between mainnet and testnet, in one typed value per network. */
export interface NetworkDefaults {
  readonly name: NetworkName;
  readonly l1: {
    /** geth `--<network>` flag and Lighthouse `--network` value. */
    readonly network: "mainnet" | "sepolia";
    /** EIP-155 chain id, what `eth_chainId` returns. */
    readonly chainId: number;
    readonly executionImage: string;
    readonly consensusImage: string;
    readonly checkpointSyncUrl: string;
  };
  readonly l2: {
    readonly junoNetwork: "mainnet" | "sepolia";
    readonly pathfinderNetwork: "mainnet" | "sepolia-testnet";
    readonly images: Readonly<Record<L2ClientName, string>>;
  };
  readonly indexer: { readonly image: string; readonly command: readonly string[] };
  readonly chains: { readonly l1: BuiltInChain; readonly l2: BuiltInChain };
}
