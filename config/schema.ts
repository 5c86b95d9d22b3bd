/**
 * JSON schema of the `rpcstack:` stack configuration, the one list of its keys: which keys
 * are secrets, which are structured, and the configuration table of docs/configuration.md (checked by a test)
 * follow from it. Annotations: `x-hint`, read by the error formatter: the sentence an operator
 * sees when a pattern or format does not match; `x-secret`, a key that must be set with
 * `pulumi config set --secret`; `x-key`, how the configuration table names the free-form keys of a map.
 * `default` holds each default that does not depend on the network; resolve() reads it there.
 */
import { TIER_NAMES } from "./tiers.js";
import { NETWORK_NAMES } from "./networks/index.js";
import { HISTORY_MODES } from "./resources.js";
import { badgesSchema } from "./badgeSchema.js";
import { quotasSchema } from "./quotaSchema.js";
import { DEFAULT_RPC_VERSION } from "./releases.js";
import { monitoringSchema } from "./monitoringSchema.js";

const hostname = {
  type: "string",
  pattern: "^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$",
  "x-hint": 'must be a lowercase DNS hostname like "rpc.example.com"',
} as const;
const address = {
  type: "string",
  pattern: "^([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]*|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)$",
  "x-hint": "must be a hostname or an IP address",
} as const;
const url = (schemes: string[]) =>
  ({
    type: "string",
    format: "uri",
    pattern: `^(${schemes.join("|")})://[^\\s/?#]+`,
    "x-hint": `must be a ${schemes.map((s) => s + "://").join(" or ")} URL`,
  }) as const;
const image = {
  type: "string",
  pattern: "^[a-z0-9]+([._/:-][a-zA-Z0-9]+)*(@sha256:[a-f0-9]{64})?$",
  "x-hint": 'must be an image reference like "ethereum/client-go:v1.17.5"',
} as const;
const duration = {
  type: "string",
  pattern: "^[1-9][0-9]*(ms|s|m)$",
  "x-hint": 'must be a duration like "3s"',
} as const;
const release = {
  type: "string",
  pattern: "^v?[0-9]+\\.[0-9]+\\.[0-9]+$",
  "x-hint": 'must be a release like "v0.17.0"',
} as const;
const cidr = {
  type: "string",
  pattern:
    "^(([0-9]{1,3}\\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])|[0-9a-fA-F:]+:[0-9a-fA-F:]*/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))$",
  "x-hint": 'must be a CIDR block like "203.0.113.7/32"',
} as const;
const port = { type: "integer", minimum: 1, maximum: 65535 } as const;
/** Where the gateway's host reaches this host's node ports (a VPC, VPN or LAN address): never a public one. */
const privateAddress = { ...address, "x-hint": "must be the host's address on the private network between the stack's hosts" } as const;
/** The chain-data disk, instead of the tier's figure (aws: the data volume's size). */
const diskGB = { type: "integer", minimum: 10, maximum: 65536 } as const;
const percent = { type: "integer", minimum: 1, maximum: 100 } as const;

const awsHost = {
  type: "object",
  properties: {
    kind: { const: "aws" },
    region: { type: "string", pattern: "^[a-z]{2}(-[a-z]+)+-[0-9]$", "x-hint": 'must be an AWS region like "eu-west-1"' },
    instanceType: { type: "string", pattern: "^[a-z][a-z0-9-]*\\.[a-z0-9]+$", "x-hint": 'must be an EC2 instance type like "m7i.xlarge"' },
    sshPublicKey: {
      type: "string",
      pattern: "^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+={0,3}( [^\\n]*)?$",
      "x-hint": 'must be an OpenSSH public key line ("ssh-ed25519 AAAA... comment")',
    },
    allowSshFrom: { type: "array", items: cidr, uniqueItems: true },
    diskGB,
    // gp3: 3000-16000 IOPS.
    diskIops: { type: "integer", minimum: 3000, maximum: 16000 },
    privateAddress,
  },
  required: ["kind", "region", "sshPublicKey"],
  additionalProperties: false,
} as const;
export const sshHost = {
  type: "object",
  properties: {
    kind: { const: "ssh" },
    address,
    user: { type: "string", pattern: "^[a-z_][a-z0-9_-]{0,31}$", "x-hint": "must be a Unix user name" },
    port: { ...port, default: 22 },
    diskGB,
    privateAddress,
  },
  required: ["kind", "address", "user"],
  additionalProperties: false,
} as const;
const localHost = {
  type: "object",
  properties: { kind: { const: "local" }, diskGB, privateAddress },
  required: ["kind"],
  additionalProperties: false,
} as const;

/**
 * A further host the stack places nodes on (`hosts.<name>`): an existing server or an EC2
 * instance, sized by its own tier, reached by the gateway's host on `privateAddress`.
 */
const extraHost = (h: typeof awsHost | typeof sshHost) =>
  ({
    ...h,
    properties: { ...h.properties, tier: { enum: TIER_NAMES } },
    required: [...h.required, "privateAddress"],
  }) as const;
/** A host name as nodes.l1 / nodes.l2 list it: `main` (the stack's host) or a key of `hosts`. */
const hostName = { type: "string", pattern: "^[a-z][a-z0-9-]{0,30}$", "x-hint": 'must be a host name like "main" or "node-b"' } as const;
/** Nodes of one layer, by the host each runs on, in order: the first keeps the names of a single node. */
const placement = { type: "array", items: hostName, minItems: 1, maxItems: 8 } as const;

const chain = {
  type: "object",
  properties: {
    path: { type: "string", pattern: "^[a-z0-9-]+$", "x-hint": "must be lowercase letters, digits and dashes" },
    chainId: { type: "string", pattern: "^[A-Z0-9]+$", "x-hint": "must be uppercase letters and digits" },
    kind: { enum: ["evm", "starknet", "cosmos"] },
    upstreams: {
      type: "object",
      properties: {
        rpcHttp: url(["http", "https"]),
        rpcWs: url(["ws", "wss"]),
        rest: url(["http", "https"]),
        grpc: url(["http", "https"]),
      },
      minProperties: 1,
      additionalProperties: false,
    },
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

export const configSchema = {
  type: "object",
  properties: {
    network: { enum: NETWORK_NAMES },
    tier: { enum: TIER_NAMES },
    host: {
      type: "object",
      required: ["kind"],
      discriminator: { propertyName: "kind" },
      oneOf: [awsHost, sshHost, localHost],
    },
    hosts: {
      type: "object",
      "x-key": "name",
      propertyNames: { pattern: "^[a-z][a-z0-9-]{0,30}$" },
      additionalProperties: {
        type: "object",
        required: ["kind"],
        discriminator: { propertyName: "kind" },
        oneOf: [extraHost(awsHost), extraHost(sshHost)],
      },
    },
    nodes: {
      type: "object",
      properties: { l1: placement, l2: placement },
      additionalProperties: false,
    },
    l1: {
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
    },
    l2: {
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
    },
    indexer: {
      type: "object",
      properties: {
        enabled: { type: "boolean", default: true },
        image,
        command: { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 },
      },
      additionalProperties: false,
    },
    gateway: {
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
    },
    badges: badgesSchema,
    monitoring: monitoringSchema,
    projectKeys: {
      type: "array",
      "x-secret": true,
      minItems: 1,
      items: {
        type: "object",
        properties: {
          name: { type: "string", pattern: "^[A-Za-z0-9_.-]{1,64}$", "x-hint": "must be 1-64 letters, digits, '.', '_' or '-'" },
          key: { type: "string", pattern: "^[A-Za-z0-9_-]{32,256}$", "x-hint": "must be 32 or more URL-safe characters (A-Z a-z 0-9 _ -)" },
        },
        required: ["name", "key"],
        additionalProperties: false,
      },
    },
    sshPrivateKey: {
      type: "string",
      "x-secret": true,
      pattern: "^-----BEGIN [A-Z ]*PRIVATE KEY-----",
      "x-hint": "must be a PEM/OpenSSH private key (-----BEGIN ... PRIVATE KEY-----)",
    },
    retainData: { type: "boolean", default: true },
    geolocation: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9-]{0,31}$", "x-hint": 'must be a short region label like "EU" or "US-East"' },
    readiness: {
      type: "object",
      properties: {
        wait: { type: "boolean", default: true },
        timeoutMinutes: { type: "integer", minimum: 1, maximum: 10080, default: 60 },
        toleranceBlocks: { type: "integer", minimum: 0, maximum: 10000, default: 6 },
        l1ReferenceUrl: url(["https"]),
        image,
      },
      additionalProperties: false,
    },
    headroomMonths: { type: "integer", minimum: 0, maximum: 120, default: 6 },
    disk: {
      type: "object",
      properties: { warnPercent: { ...percent, default: 85 }, stopPercent: { ...percent, default: 95 } },
      additionalProperties: false,
    },
  },
  // projectKeys is required too, by a cross-field rule: tools that never see secrets skip it.
  // So is tier, except on the devnet network, which brings its own requirements.
  required: ["network", "host"],
  additionalProperties: false,
} as const;

type TopLevel = keyof typeof configSchema.properties;
const topLevel = Object.entries(configSchema.properties) as [TopLevel, Record<string, unknown>][];

/** Top-level keys whose stack-file value is structured (JSON under the hood), not a plain string. */
export const STRUCTURED_KEYS: ReadonlySet<string> = new Set(topLevel.filter(([, s]) => s.type !== undefined && s.type !== "string").map(([k]) => k));

/** Keys that must be set with `pulumi config set --secret`. */
export const SECRET_KEYS: readonly TopLevel[] = topLevel.filter(([, s]) => s["x-secret"] === true).map(([k]) => k);

/** The schema's `default` of every key that has one, by the configuration table's key name. */
export function configDefaults(schema: Record<string, any> = configSchema, prefix = ""): Record<string, unknown> {
  const at = (k: string) => (prefix ? `${prefix}.${k}` : k);
  const props = Object.entries((schema.properties ?? {}) as Record<string, Record<string, any>>);
  return Object.assign(
    {},
    ...props.map(([k, s]) => ({ ...(s.default !== undefined ? { [at(k)]: s.default } : {}), ...configDefaults(s, at(k)) })),
    ...((schema.oneOf ?? []) as Record<string, any>[]).map((v) => configDefaults(v, prefix)),
  );
}

/**
 * Every key an operator can set, as the configuration table names them: `host.region`,
 * `gateway.chains[]`, `gateway.chains[].path`, `gateway.methodPolicy.<path>`.
 */
export function configKeys(schema: Record<string, any> = configSchema, prefix = ""): string[] {
  const at = (k: string) => (prefix ? `${prefix}.${k}` : k);
  const props = Object.entries((schema.properties ?? {}) as Record<string, Record<string, any>>);
  const own = props.flatMap(([k, s]) => [at(k), ...configKeys(s, at(k))]);
  const variants = ((schema.oneOf ?? []) as Record<string, any>[]).flatMap((v) => configKeys(v, prefix));
  const items = schema.type === "array" && schema.items?.properties ? [`${prefix}[]`, ...configKeys(schema.items, `${prefix}[]`)] : [];
  const map = typeof schema.additionalProperties === "object" ? [at(`<${schema["x-key"]}>`), ...configKeys(schema.additionalProperties, at(`<${schema["x-key"]}>`))] : [];
  return [...new Set([...own, ...variants, ...items, ...map])];
}
