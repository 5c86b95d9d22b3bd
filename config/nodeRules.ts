/** Rules for `l1.external` (an L1 node elsewhere), `l1.history` and `disk`, beside config/rules.ts. */
import { problem } from "./errors.js";
import { isObj } from "./guards.js";
import { configSchema } from "./schema.js";
import type { RawConfig } from "./types.js";

const DISK_DEFAULTS = configSchema.properties.disk.properties;

export function externalL1Problems(raw: RawConfig, isSecret: (key: string) => boolean | undefined): string[] {
  const l1: Record<string, unknown> = isObj(raw.l1) ? raw.l1 : {};
  const out: string[] = [];
  const dev = raw.network === "devnet";
  if (l1.external !== undefined) {
    // The URL may carry credentials: it must arrive encrypted, never sit in the stack file.
    if (isSecret("l1") === false) out.push(problem(["l1", "external"], "must be set as a secret: pulumi config set --secret --path l1.external.rpcHttp <url> (and l1.external.rpcWs)"));
    if (dev) out.push(problem(["l1", "external"], "does not apply to network devnet: its L1 is geth --dev on this machine"));
    for (const key of ["executionImage", "consensusImage", "executionVersion", "consensusVersion", "checkpointSyncUrl", "history"]) {
      if (l1[key] !== undefined) out.push(problem(["l1", key], "does not apply with rpcstack:l1.external: the stack deploys no L1 node"));
    }
  }
  // Checked with the defaults filled in: a warn threshold set alone above the default stop would
  // make the sync check (rpcstack-ready) refuse its arguments at deploy time.
  const disk: Record<string, unknown> = isObj(raw.disk) ? raw.disk : {};
  const warn = disk.warnPercent ?? DISK_DEFAULTS.warnPercent.default;
  const stop = disk.stopPercent ?? DISK_DEFAULTS.stopPercent.default;
  if (typeof warn === "number" && typeof stop === "number" && warn > stop) {
    out.push(problem(["disk", "warnPercent"], `must not be above rpcstack:disk.stopPercent (${stop}${disk.stopPercent === undefined ? ", its default" : ""})`));
  }
  if (dev && l1.history !== undefined) out.push(problem(["l1", "history"], "does not apply to network devnet: geth --dev keeps its chain in memory"));
  return out;
}
