import { devnet } from "./devnet.js";
import { mainnet } from "./mainnet.js";
import { testnet } from "./testnet.js";
import type { NetworkDefaults, NetworkName } from "./types.js";

export * from "./types.js";
export { IMAGES, DEVNET_IMAGES } from "./images.js";

export const NETWORKS: Readonly<Record<NetworkName, NetworkDefaults>> = { mainnet, testnet, devnet };
export const NETWORK_NAMES = Object.keys(NETWORKS) as NetworkName[];
