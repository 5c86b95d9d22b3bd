/**
 * JSON schema of the `rpcstack:` stack configuration. `x-hint` is an annotation read by the
 * error formatter: the sentence an operator sees when a pattern or format does not match.
 */
import { TIER_NAMES } from "./tiers.js";
import { NETWORK_NAMES } from "./networks/index.js";
import { HISTORY_MODES } from "./resources.js";

const hostname = {
  type: "string",
  pattern: "^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$",
  "x-hint": 'must be a lowercase DNS hostname like "rpc.example.com"',
};
const address = {
  type: "string",
  pattern: "^([0-9]{1,3}(\\.[0-9]{1,3}){3}|[0-9a-fA-F:]+:[0-9a-fA-F:]*|([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)$",
  "x-hint": "must be a hostname or an IP address",
};
const url = (schemes: string[]) => ({
  type: "string",
  format: "uri",
  pattern: `^(${schemes.join("|")})://[^\\s/?#]+`,
  "x-hint": `must be a ${schemes.map((s) => s + "://").join(" or ")} URL`,
});
const image = {
  type: "string",
  pattern: "^[a-z0-9]+([._/:-][a-zA-Z0-9]+)*(@sha256:[a-f0-9]{64})?$",
  "x-hint": 'must be an image reference like "ethereum/client-go:v1.17.5"',
};
const duration = {
  type: "string",
  pattern: "^[1-9][0-9]*(ms|s|m)$",
  "x-hint": 'must be a duration like "3s"',
};
const release = {
  type: "string",
  pattern: "^v?[0-9]+\\.[0-9]+\\.[0-9]+$",
  "x-hint": 'must be a release like "v0.17.0"',
};
const cidr = {
  type: "string",
  pattern:
    "^(([0-9]{1,3}\\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])|[0-9a-fA-F:]+:[0-9a-fA-F:]*/([0-9]|[1-9][0-9]|1[01][0-9]|12[0-8]))$",
  "x-hint": 'must be a CIDR block like "203.0.113.7/32"',
};
const port = { type: "integer", minimum: 1, maximum: 65535 };
/** The chain-data disk, instead of the tier's figure (aws: the data volume's size). */
const diskGB = { type: "integer", minimum: 10, maximum: 65536 };
const percent = { type: "integer", minimum: 1, maximum: 100 };

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
  },
  required: ["kind", "region", "sshPublicKey"],
  additionalProperties: false,
};
const sshHost = {
  type: "object",
  properties: {
    kind: { const: "ssh" },
    address,
    user: { type: "string", pattern: "^[a-z_][a-z0-9_-]{0,31}$", "x-hint": "must be a Unix user name" },
    port,
    diskGB,
  },
  required: ["kind", "address", "user"],
  additionalProperties: false,
};
const localHost = {
  type: "object",
  properties: { kind: { const: "local" }, diskGB },
  required: ["kind"],
  additionalProperties: false,
};

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
};

/** JSON-RPC method names, or families ending in "_" (debug_). */
const methodList = { type: "array", items: { type: "string", pattern: "^[A-Za-z0-9_]{1,128}$", "x-hint": "must be method names or families like \"debug_\"" } };

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
        pendingPollInterval: duration,
      },
      additionalProperties: false,
    },
    indexer: {
      type: "object",
      properties: {
        enabled: { type: "boolean" },
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
        rateLimitPerSecond: { type: "integer", minimum: 1, maximum: 1000000 },
        maxBodyKiB: { type: "integer", minimum: 1, maximum: 65536 },
        corsOrigins: { type: "array", minItems: 1, items: { type: "string", pattern: "^(\\*|https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)$", "x-hint": "must be \"*\" or origins like \"https://app.example.com\"" } },
        maxBatch: { type: "integer", minimum: 1, maximum: 4096 },
        wrongKeysPerMinute: { type: "integer", minimum: 0, maximum: 1000000 },
        maxConnectionsPerAddress: { type: "integer", minimum: 1, maximum: 1000000 },
        wsMaxConnectionsPerKey: { type: "integer", minimum: 1, maximum: 1000000 },
        wsIdleTimeoutSeconds: { type: "integer", minimum: 10, maximum: 86400 },
        methodPolicy: {
          type: "object",
          propertyNames: { pattern: "^[a-z0-9-]+$" },
          additionalProperties: {
            type: "object",
            properties: { allowMethods: methodList, denyMethods: methodList },
            additionalProperties: false,
          },
        },
        maxConnections: { type: "integer", minimum: 100, maximum: 1000000 },
        relayExternalL1: { type: "boolean" },
        image,
        certbotImage: image,
      },
      additionalProperties: false,
    },
    projectKeys: {
      type: "array",
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
      pattern: "^-----BEGIN [A-Z ]*PRIVATE KEY-----",
      "x-hint": "must be a PEM/OpenSSH private key (-----BEGIN ... PRIVATE KEY-----)",
    },
    retainData: { type: "boolean" },
    geolocation: { type: "string", pattern: "^[A-Za-z0-9][A-Za-z0-9-]{0,31}$", "x-hint": 'must be a short region label like "EU" or "US-East"' },
    readiness: {
      type: "object",
      properties: {
        wait: { type: "boolean" },
        timeoutMinutes: { type: "integer", minimum: 1, maximum: 10080 },
        toleranceBlocks: { type: "integer", minimum: 0, maximum: 10000 },
        l1ReferenceUrl: url(["https"]),
        image,
      },
      additionalProperties: false,
    },
    headroomMonths: { type: "integer", minimum: 0, maximum: 120 },
    disk: {
      type: "object",
      properties: { warnPercent: percent, stopPercent: percent },
      additionalProperties: false,
    },
  },
  // projectKeys is required too, by a cross-field rule: tools that never see secrets skip it.
  // So is tier, except on the devnet network, which brings its own requirements.
  required: ["network", "host"],
  additionalProperties: false,
} as const;

/** Top-level keys whose stack-file value is structured (JSON under the hood), not a plain string. */
export const STRUCTURED_KEYS = new Set(["host", "l1", "l2", "indexer", "gateway", "projectKeys", "retainData", "readiness", "headroomMonths", "disk"]);

/** Keys that must be set with `pulumi config set --secret`. */
export const SECRET_KEYS = ["projectKeys", "sshPrivateKey"] as const;
