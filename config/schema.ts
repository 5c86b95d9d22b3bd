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
import { badgesSchema } from "./badgeSchema.js";
import { gatewaySchema } from "./gatewaySchema.js";
import { hostSchema, hostsSchema } from "./hostSchema.js";
import { monitoringSchema } from "./monitoringSchema.js";
import { l1Schema, l2Schema, nodesSchema } from "./nodeSchema.js";
import { image, url } from "./schemaFormats.js";

const percent = { type: "integer", minimum: 1, maximum: 100 } as const;

export const configSchema = {
  type: "object",
  properties: {
    network: { enum: NETWORK_NAMES },
    tier: { enum: TIER_NAMES },
    host: hostSchema,
    hosts: hostsSchema,
    nodes: nodesSchema,
    l1: l1Schema,
    l2: l2Schema,
    indexer: {
      type: "object",
      properties: {
        enabled: { type: "boolean", default: true },
        image,
        command: { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 },
      },
      additionalProperties: false,
    },
    gateway: gatewaySchema,
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
    kubeconfig: {
      type: "string",
      "x-secret": true,
      pattern: "\"?clusters\"?\\s*:",
      "x-hint": "must be a kubeconfig (YAML or JSON with clusters, contexts and users)",
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
