/** The JSON schema of rpcstack:nodes, rpcstack:l1 and rpcstack:l2: where the chain nodes run and how, a part of config/schema.ts. */
import { HISTORY_MODES } from "./resources.js";
import { DEFAULT_RPC_VERSION } from "./releases.js";
import { duration, image, release, url } from "./schemaFormats.js";

/** A host name as nodes.l1 / nodes.l2 list it: `main` (the stack's host) or a key of `hosts`. */
const hostName = { type: "string", pattern: "^[a-z][a-z0-9-]{0,30}$", "x-hint": 'must be a host name like "main" or "node-b"' } as const;
/** Nodes of one layer, by the host each runs on, in order: the first keeps the names of a single node. */
const placement = { type: "array", items: hostName, minItems: 1, maxItems: 8 } as const;

export const nodesSchema = {
  type: "object",
  properties: { l1: placement, l2: placement },
  additionalProperties: false,
} as const;
export const l1Schema = {
  type: "object",
  properties: {
    executionImage: image,
    consensusImage: image,
    // Which release a digest-pinned or custom-tagged image runs: flags and floors follow it.
    executionVersion: release,
    consensusVersion: release,
    checkpointSyncUrl: url(["https"]),
    history: { enum: HISTORY_MODES },
    // Set with `pulumi config set --secret --path l1.external.rpcHttp ...`: URLs may carry credentials.
    external: {
      type: "object",
      properties: { rpcHttp: url(["http", "https"]), rpcWs: url(["ws", "wss"]) },
      required: ["rpcHttp", "rpcWs"],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;
export const l2Schema = {
  type: "object",
  properties: {
    client: { enum: ["juno", "pathfinder", "starknet-devnet"] },
    image,
    version: release,
    pendingPollInterval: { ...duration, default: "3s" },
    // The Starknet JSON-RPC spec version the unversioned gateway path serves, on every L2 node.
    rpcVersion: { type: "string", pattern: "^v0_[0-9]+$", "x-hint": 'must be a spec version as the nodes name it, like "v0_9"', default: DEFAULT_RPC_VERSION },
    // Restore the node's database from a snapshot before its first start (config/snapshots.ts).
    snapshot: {
      type: "object", "x-hint": 'must be "latest", an https:// URL, or { url, sha256, sizeBytes, unpackedGB } with url one of those',
      properties: {
        url: { type: "string", pattern: "^(latest|https://[^\\s/?#@]+([/?#][^\\s]*)?)$", "x-hint": 'must be "latest" or an https:// URL (without user:password@)' },
        sha256: { type: "string", pattern: "^[0-9a-f]{64}$", "x-hint": "must be the archive's SHA-256: 64 lowercase hex digits" },
        sizeBytes: { type: "integer", minimum: 1 },
        unpackedGB: { type: "integer", minimum: 1, maximum: 65536 },
      },
      required: ["url"],
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;
