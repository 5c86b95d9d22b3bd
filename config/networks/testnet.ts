import type { NetworkDefaults } from "./types.js";
import { IMAGES, INDEXER_COMMAND } from "./images.js";

export const testnet: NetworkDefaults = {
  name: "testnet",
  l1: {
    network: "sepolia",
    chainId: 11155111,
    executionImage: IMAGES.geth,
    consensusImage: IMAGES.lighthouse,
    checkpointSyncUrl: "https://sepolia.beaconstate.info",
  },
  l2: {
    // SN_SEPOLIA
    chainId: "0x534e5f5345504f4c4941",
    junoNetwork: "sepolia",
    pathfinderNetwork: "sepolia-testnet",
    clients: ["juno", "pathfinder"],
    images: { juno: IMAGES.juno, pathfinder: IMAGES.pathfinder },
  },
  indexer: { image: IMAGES.indexer, command: INDEXER_COMMAND },
  chains: {
    l1: { path: "sep1", chainId: "SEP1", kind: "evm", layer: "l1" },
    l2: { path: "strks", chainId: "STRKS", kind: "starknet", layer: "l2" },
  },
};
