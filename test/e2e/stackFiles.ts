/** The stack files the end-to-end test exports: the local stack on Sepolia, its Pathfinder variant, and devnet. */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { ROOT } from "../harness.js";
import type { TestImages } from "../../devtools/images/build.js";

/** Pulumi.e2e.yaml and Pulumi.e2e-pathfinder.yaml in `dir`, with the test's images through the stack's image keys. */
export function writeStackFiles(dir: string, images: TestImages): void {
  // The local stack on Sepolia (the variant stacks/Pulumi.local.yaml describes in its comment:
  // geth + Lighthouse + Juno), with the test's images through the stack's own image keys.
  const stack = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
  Object.assign(stack.config, {
    "rpcstack:network": "testnet",
    // A Sepolia L1 + L2 needs ~1.1 TB (config/resources.ts): only the recommended tier passes the check.
    "rpcstack:tier": "recommended",
    "rpcstack:l1": { executionImage: images.geth, consensusImage: images.lighthouse },
    "rpcstack:l2": { client: "juno", pendingPollInterval: "3s", image: images.juno },
    "rpcstack:indexer": { image: images.node },
    // gateway.maxConnections as shipped: unset, fitted to this machine's Docker daemon by the export.
    "rpcstack:gateway": { image: images.haproxy, certbotImage: images.certbot },
    "rpcstack:readiness": { ...stack.config["rpcstack:readiness"], image: images.node },
  });
  writeFileSync(join(dir, "Pulumi.e2e.yaml"), stringify(stack));
  const pf = structuredClone(stack);
  pf.config["rpcstack:l2"] = { client: "pathfinder", image: images.pathfinder };
  pf.config["rpcstack:indexer"] = { enabled: false };
  writeFileSync(join(dir, "Pulumi.e2e-pathfinder.yaml"), stringify(pf));
}

/**
 * The default local stack's config (devnet) with the test's images through its image keys: real
 * geth --dev and the Starknet Devnet stand-in. For the compose export and the real engine alike.
 */
export function withDevnetImages(config: Record<string, unknown>, images: TestImages): Record<string, unknown> {
  return {
    ...config,
    "rpcstack:l1": { executionImage: images.geth },
    "rpcstack:l2": { image: images.starknetDevnet },
    "rpcstack:indexer": { image: images.node },
    // gateway.maxConnections as shipped: unset, fitted to the Docker daemon by the preflight or the export.
    "rpcstack:gateway": { image: images.haproxy, certbotImage: images.certbot },
    "rpcstack:readiness": { ...(config["rpcstack:readiness"] as object), image: images.node },
    // Used where monitoring is on (ssh and aws hosts by default).
    "rpcstack:monitoring": { ...(config["rpcstack:monitoring"] as object), prometheusImage: images.prometheus },
  };
}

/**
 * Pulumi.e2e-devnet.yaml in `dir`: the default local stack with real geth --dev and the Starknet
 * Devnet stand-in, `extra` keys (e.g. rpcstack:badges) and `gateway` settings beside the image keys.
 */
export function writeDevnetStackFile(dir: string, images: TestImages, extra: Record<string, unknown> = {}, gateway: Record<string, unknown> = {}): void {
  const dev = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
  const config = withDevnetImages(dev.config, images);
  config["rpcstack:gateway"] = { ...(config["rpcstack:gateway"] as object), ...gateway };
  writeFileSync(join(dir, "Pulumi.e2e-devnet.yaml"), stringify({ ...dev, config: { ...config, ...extra } }));
}
