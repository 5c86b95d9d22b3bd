/** The rpcstack Pulumi program: validate the stack's config, then build one RpcProvider. */
import { RpcProvider } from "./components/rpcProvider.js";
import { readStackConfig } from "./components/stackConfig.js";

// Throws ConfigError, listing every problem, before any resource is registered.
const config = readStackConfig();
const provider = new RpcProvider("rpcstack", { config });

export const network = provider.network;
export const tier = provider.tier;
