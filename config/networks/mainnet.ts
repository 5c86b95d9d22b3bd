import type { NetworkDefaults } from "./types.js";
import { IMAGES, INDEXER_COMMAND } from "./images.js";

export const mainnet: NetworkDefaults = {
  name: "mainnet",
  l1: {
    network: "mainnet",
    chainId: 1,
    executionImage: IMAGES.geth,
    consensusImage: IMAGES.lighthouse,
    checkpointSyncUrl: "https://mainnet.checkpoint.sigp.io",
  },
  l2: {
    // SN_MAIN
    chainId: "0x534e5f4d41494e",
    junoNetwork: "mainnet",
    pathfinderNetwork: "mainnet",
    clients: ["juno", "pathfinder"],
    images: { juno: IMAGES.juno, pathfinder: IMAGES.pathfinder },
  },
  indexer: { image: IMAGES.indexer, command: INDEXER_COMMAND },
  chains: {
    l1: { path: "eth", chainId: "ETH1", kind: "evm", layer: "l1" },
    l2: { path: "strk", chainId: "STRK", kind: "starknet", layer: "l2" },
  },
};
