/** Stack settings on a cluster (host kind kubernetes), from the repository's stack files. */
import { loadConfig, type RpcStackConfig } from "../../config/index.js";
import { TEST_PROJECT_KEYS, encodeConfigValue, stackFileConfig } from "../harness.js";

export const TEST_KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n";

/**
 * The testnet stack (Sepolia, Juno) or the devnet stack moved onto a cluster; `host` and `gateway`
 * fields replace the stack file's (testnet: a domain and a TLS Secret instead of ACME).
 */
export function kubeStack(stack: "testnet" | "local", o: { host?: Record<string, unknown>; gateway?: Record<string, unknown>; extra?: Record<string, unknown> } = {}): RpcStackConfig {
  const base = stackFileConfig(stack);
  const gateway = stack === "testnet" ? { domain: "rpc-testnet.example.com", ...o.gateway } : o.gateway;
  const host = { kind: "kubernetes", ...(stack === "testnet" ? { tlsSecret: "rpc-testnet-tls" } : {}), ...o.host };
  return loadConfig({
    entries: {
      ...base,
      "rpcstack:host": encodeConfigValue(host),
      ...(gateway ? { "rpcstack:gateway": encodeConfigValue(gateway) } : {}),
      "rpcstack:projectKeys": encodeConfigValue(TEST_PROJECT_KEYS),
      "rpcstack:kubeconfig": TEST_KUBECONFIG,
      ...Object.fromEntries(Object.entries(o.extra ?? {}).map(([k, v]) => [`rpcstack:${k}`, encodeConfigValue(v)])),
    },
  });
}
