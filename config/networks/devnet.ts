import type { NetworkDefaults } from "./types.js";
import { DEVNET_IMAGES, IMAGES, INDEXER_COMMAND } from "./images.js";

/**
 * A trial chain on this machine, serving within minutes: geth --dev for L1 (it seals its own
 * blocks, so no consensus client), Starknet Devnet for L2. Nothing to sync and no peers.
 */
export const devnet: NetworkDefaults = {
  name: "devnet",
  l1: {
    network: "dev",
    // geth --dev's network id and chain id (go-ethereum cmd/utils/flags.go, DeveloperFlag case).
    chainId: 1337,
    executionImage: IMAGES.geth,
  },
  l2: {
    // SN_SEPOLIA: Starknet Devnet's default --chain-id
    chainId: "0x534e5f5345504f4c4941",
    clients: ["starknet-devnet"],
    images: { "starknet-devnet": DEVNET_IMAGES.starknetDevnet },
  },
  indexer: { image: IMAGES.indexer, command: INDEXER_COMMAND },
  chains: {
    l1: { path: "ethdev", chainId: "ETHDEV", kind: "evm", layer: "l1" },
    l2: { path: "strkdev", chainId: "STRKDEV", kind: "starknet", layer: "l2" },
  },
  dev: {
    // Both chains seal a block every 2 s (Starknet's own pace), so a head is never older than
    // a few seconds and the readiness rule (a non-zero, recent head) holds within a minute.
    l1BlockSeconds: 2,
    l2BlockSeconds: 2,
    // No chain to sync: the images (under 1.5 GB), the rotated logs (at most 5 x 50 MB per
    // container, services/types.ts LOG_OPTIONS, 5 long-running containers) and geth's dev
    // chain of empty blocks (tens of MB a day) fit in 10 GB with room to spare. Starknet
    // Devnet keeps its state in memory.
    requirements: { name: "devnet", cores: 2, memoryGiB: 2, diskGB: 10, bandwidthMbps: 0 },
    banner:
      "rpcstack: network devnet is a private trial chain on this machine (geth --dev and Starknet Devnet), " +
      "NOT Ethereum, Sepolia or Starknet: its blocks, balances and transactions exist nowhere else and are lost when the containers go.",
  },
};
