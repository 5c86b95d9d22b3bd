/** The JSON schema of rpcstack:gateway (docs/gateway.md), a part of config/schema.ts. */
import { quotasSchema } from "./quotaSchema.js";
import { hostname, image, url } from "./schemaFormats.js";

const upstreams = {
  type: "object",
  properties: {
    rpcHttp: url(["http", "https"]),
    rpcWs: url(["ws", "wss"]),
    rest: url(["http", "https"]),
    grpc: url(["http", "https"]),
  },
  minProperties: 1,
  additionalProperties: false,
} as const;

const chain = {
  type: "object",
  properties: {
    path: { type: "string", pattern: "^[a-z0-9-]+$", "x-hint": "must be lowercase letters, digits and dashes" },
    chainId: { type: "string", pattern: "^[A-Z0-9]+$", "x-hint": "must be uppercase letters and digits" },
    kind: { enum: ["evm", "starknet", "cosmos"] },
    upstreams,
    // Further nodes of the same chain: the gateway checks each and fails over between them.
    replicas: { type: "array", minItems: 1, maxItems: 15, items: upstreams },
    hostnames: {
      type: "object",
      properties: { tendermintRpc: hostname, rest: hostname, grpc: hostname },
      additionalProperties: false,
    },
  },
  required: ["path", "chainId", "kind", "upstreams"],
  additionalProperties: false,
} as const;

/** JSON-RPC method names, or families ending in "_" (debug_). */
const methodList = { type: "array", items: { type: "string", pattern: "^[A-Za-z0-9_]{1,128}$", "x-hint": "must be method names or families like \"debug_\"" } } as const;

export const gatewaySchema = {
  type: "object",
  properties: {
    domain: hostname,
    acmeEmail: { type: "string", format: "email", "x-hint": "must be an email address" },
    chains: { type: "array", items: chain },
    rateLimitPerSecond: { type: "integer", minimum: 1, maximum: 1000000, default: 200 },
    quotas: quotasSchema,
    maxBodyKiB: { type: "integer", minimum: 1, maximum: 65536, default: 1024 },
    corsOrigins: {
      type: "array",
      minItems: 1,
      items: { type: "string", pattern: "^(\\*|https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)$", "x-hint": "must be \"*\" or origins like \"https://app.example.com\"" },
      default: ["*"],
    },
    // geth's own default batch limit (--rpc.batch-request-limit) is 1000 calls.
    maxBatch: { type: "integer", minimum: 1, maximum: 4096, default: 1000 },
    wrongKeysPerMinute: { type: "integer", minimum: 0, maximum: 1000000, default: 60 },
    maxConnectionsPerAddress: { type: "integer", minimum: 1, maximum: 1000000, default: 64 },
    wsMaxConnectionsPerKey: { type: "integer", minimum: 1, maximum: 1000000, default: 100 },
    wsMaxSubscriptionsPerSocket: { type: "integer", minimum: 1, maximum: 1000000, default: 32 },
    wsMaxSubscriptionsPerKey: { type: "integer", minimum: 1, maximum: 1000000, default: 1000 },
    filtersPerKey: { type: "integer", minimum: 1, maximum: 1000000, default: 100 },
    wsIdleTimeoutSeconds: { type: "integer", minimum: 10, maximum: 86400, default: 300 },
    methodPolicy: {
      type: "object",
      "x-key": "path",
      propertyNames: { pattern: "^[a-z0-9-]+$" },
      additionalProperties: {
        type: "object",
        properties: { allowMethods: methodList, denyMethods: methodList },
        additionalProperties: false,
      },
    },
    maxConnections: { type: "integer", minimum: 100, maximum: 1000000, default: 20000 },
    cache: {
      type: "object",
      properties: {
        enabled: { type: "boolean", default: true },
        maxBytes: { type: "integer", minimum: 1048576, maximum: 68719476736 },
        maxObjectBytes: { type: "integer", minimum: 2097152, maximum: 268435456, default: 4194304 },
        chains: { type: "object", "x-key": "path", propertyNames: { pattern: "^[a-z0-9-]+$" }, additionalProperties: { type: "boolean" } },
      },
      additionalProperties: false,
    },
    relayExternalL1: { type: "boolean", default: true },
    image,
    certbotImage: image,
  },
  additionalProperties: false,
} as const;
