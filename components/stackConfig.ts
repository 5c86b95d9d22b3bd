/** Reads the `rpcstack:` stack configuration from the Pulumi engine. The only place that does. */
import * as pulumi from "@pulumi/pulumi";
import { NAMESPACE, loadConfig, type RpcStackConfig } from "../config/index.js";

// The SDK knows which keys were set with --secret but keeps the check off its typed surface.
const runtime = pulumi.runtime as typeof pulumi.runtime & { isConfigSecret?: (fullKey: string) => boolean };

export function readStackConfig(): RpcStackConfig {
  return loadConfig({
    entries: pulumi.runtime.allConfig(),
    isSecret: runtime.isConfigSecret ? (key) => runtime.isConfigSecret!(`${NAMESPACE}:${key}`) : undefined,
  });
}
