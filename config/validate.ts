/**
 * Stack config -> validated, defaulted RpcStackConfig. Pure: the caller hands in the raw
 * `rpcstack:*` entries (strings, as Pulumi stores them) and a way to ask which are secrets.
 */
import Ajv, { type ErrorObject } from "ajv";
import addFormats from "ajv-formats";
import { ConfigError, NAMESPACE, keyName, problem } from "./errors.js";
import { NETWORKS } from "./networks/index.js";
import { GATEWAY_IMAGES, READINESS_IMAGE } from "./networks/images.js";
import { clientRelease, junoPollFlag, type ClientName } from "./releases.js";
import { clientImages, crossFieldProblems, type ClientImage } from "./rules.js";
import { formatVersion, type Version } from "./versions.js";
import { STRUCTURED_KEYS, configSchema } from "./schema.js";
import { TIERS } from "./tiers.js";
import { externalL1Problems } from "./nodeRules.js";
import { sizingProblems } from "./sizing.js";
import type { HostConfig, RawConfig, RawHost, RpcStackConfig } from "./types.js";

const ajv = new Ajv({ allErrors: true, verbose: true, discriminator: true, strict: true, strictRequired: false });
addFormats(ajv, ["uri", "email"]);
ajv.addKeyword({ keyword: "x-hint", schemaType: "string" });
const validateSchema = ajv.compile(configSchema);

export interface ConfigSource {
  /** Every `rpcstack:<key>` entry of the stack, values as Pulumi stores them (strings). */
  readonly entries: Readonly<Record<string, string>>;
  /** Whether a top-level key was set as a secret; undefined when the engine cannot tell. */
  readonly isSecret?: (key: string) => boolean | undefined;
  /**
   * For tools that never see secrets (the compose exporter): a stack whose secrets are
   * encrypted or unset is not an error there.
   */
  readonly withoutSecrets?: boolean;
}

/** Validate a stack's configuration; throws ConfigError listing every problem at once. */
export function loadConfig(source: ConfigSource): RpcStackConfig {
  const { raw, problems } = parseEntries(source.entries);
  if (!validateSchema(raw)) problems.push(...(validateSchema.errors ?? []).map(formatAjvError));
  problems.push(...crossFieldProblems(raw, source.isSecret ?? (() => undefined), !source.withoutSecrets));
  problems.push(...externalL1Problems(raw, source.isSecret ?? (() => undefined)));
  if (problems.length) throw new ConfigError(dedupe(problems));
  const config = resolve(raw);
  // The disk check needs the resolved stack: which nodes run, with which history, on what disk.
  const tooSmall = sizingProblems(config);
  if (tooSmall.length) throw new ConfigError(tooSmall);
  return config;
}

function parseEntries(entries: Readonly<Record<string, string>>): { raw: RawConfig; problems: string[] } {
  const raw: Record<string, unknown> = {};
  const problems: string[] = [];
  const prefix = `${NAMESPACE}:`;
  for (const [fullKey, value] of Object.entries(entries)) {
    if (!fullKey.startsWith(prefix)) continue;
    const key = fullKey.slice(prefix.length);
    if (!STRUCTURED_KEYS.has(key)) {
      raw[key] = value;
      continue;
    }
    try {
      raw[key] = JSON.parse(value);
    } catch {
      problems.push(problem([key], "must be structured YAML (an object, list or boolean), not a plain string"));
    }
  }
  return { raw: raw as RawConfig, problems };
}

function formatAjvError(e: ErrorObject): string {
  const segments: (string | number)[] = e.instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  const params = e.params as Record<string, unknown>;
  const hint = (e.parentSchema as Record<string, unknown> | undefined)?.["x-hint"];
  switch (e.keyword) {
    case "required":
      return problem([...segments, String(params.missingProperty)], "is required");
    case "additionalProperties":
      return problem([...segments, String(params.additionalProperty)], `is not a known key${knownKeys(e)}`);
    case "enum":
      return problem(segments, `must be one of ${(params.allowedValues as unknown[]).join(", ")} (got ${JSON.stringify(e.data)})`);
    case "const":
      return problem(segments, `must be ${JSON.stringify(params.allowedValue)}`);
    case "discriminator":
      return params.error === "mapping"
        ? problem([...segments, "kind"], `must be one of aws, ssh, local (got ${JSON.stringify(params.tagValue)})`)
        : problem([...segments, "kind"], "is required and must be a string");
    case "pattern":
    case "format":
      return problem(segments, `${typeof hint === "string" ? hint : `must match ${params.pattern ?? params.format}`} (got ${safeEcho(segments, e.data)})`);
    case "type":
      return problem(segments, `must be ${article(String(params.type))}`);
    case "minItems":
      return problem(segments, `must list at least ${params.limit} item${params.limit === 1 ? "" : "s"}`);
    case "minProperties":
      return problem(segments, "must name at least one entry");
    default:
      return problem(segments, e.message ?? "is invalid");
  }
}

function knownKeys(e: ErrorObject): string {
  const props = (e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
  return props ? ` (known: ${Object.keys(props).join(", ")})` : "";
}

// Secret material is never repeated back in an error message.
function safeEcho(segments: readonly (string | number)[], data: unknown): string {
  const k = keyName(segments);
  if (k.startsWith("projectKeys") || k === "sshPrivateKey" || k.startsWith("l1.external")) return "a value that is not shown";
  return JSON.stringify(data);
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);
const dedupe = (xs: string[]) => [...new Set(xs)];

function resolve(raw: RawConfig): RpcStackConfig {
  // Schema and rules have passed, so required fields are present.
  const network = NETWORKS[raw.network!];
  const client = raw.l2?.client ?? network.l2.clients[0];
  const images = clientImages(raw, network);
  const release = (c: ClientName) => {
    const found = images.find((i) => i.client === c);
    return found ? releaseOf(found) : undefined;
  };
  const [geth, lighthouse, l2] = [release("geth")!, release("lighthouse"), release(client)!];
  const pendingPollInterval = raw.l2?.pendingPollInterval ?? "3s";
  const poll = client === "juno" ? junoPollFlag(l2) : undefined;
  const external = raw.l1?.external !== undefined;
  const consensusImage = external ? undefined : raw.l1?.consensusImage ?? network.l1.consensusImage;
  return {
    network,
    // A trial chain brings its own (small) requirements instead of a hardware tier.
    tier: network.dev?.requirements ?? TIERS[raw.tier!],
    host: resolveHost(raw.host!),
    l1: {
      executionImage: raw.l1?.executionImage ?? network.l1.executionImage,
      executionRelease: formatVersion(geth),
      ...(consensusImage && lighthouse
        ? {
            consensusImage,
            consensusRelease: formatVersion(lighthouse),
            checkpointSyncUrl: raw.l1?.checkpointSyncUrl ?? network.l1.checkpointSyncUrl,
          }
        : {}),
      // Post-merge history by default: what makes mainnet fit the recommended tier (config/sizing.ts).
      ...(network.dev || external ? {} : { history: raw.l1?.history ?? "postmerge" }),
      external,
    },
    l2: {
      client,
      image: raw.l2?.image ?? network.l2.images[client]!,
      release: formatVersion(l2),
      pendingPollInterval,
      ...(poll && "flag" in poll ? { pollFlag: poll.flag } : {}),
    },
    indexer: {
      enabled: raw.indexer?.enabled ?? true,
      image: raw.indexer?.image ?? network.indexer.image,
      command: raw.indexer?.command ?? network.indexer.command,
    },
    gateway: {
      domain: raw.gateway?.domain,
      acmeEmail: raw.gateway?.acmeEmail,
      chains: raw.gateway?.chains ?? [],
      rateLimitPerSecond: raw.gateway?.rateLimitPerSecond ?? 200,
      maxBodyKiB: raw.gateway?.maxBodyKiB ?? 1024,
      corsOrigins: raw.gateway?.corsOrigins ?? ["*"],
      // geth's own default batch limit (--rpc.batch-request-limit) is 1000 calls.
      maxBatch: raw.gateway?.maxBatch ?? 1000,
      wrongKeysPerMinute: raw.gateway?.wrongKeysPerMinute ?? 60,
      maxConnectionsPerAddress: raw.gateway?.maxConnectionsPerAddress ?? 64,
      wsMaxConnectionsPerKey: raw.gateway?.wsMaxConnectionsPerKey ?? 100,
      wsIdleTimeoutSeconds: raw.gateway?.wsIdleTimeoutSeconds ?? 300,
      methodPolicy: raw.gateway?.methodPolicy ?? {},
      maxConnections: raw.gateway?.maxConnections ?? 20000,
      relayExternalL1: raw.gateway?.relayExternalL1 ?? true,
      image: raw.gateway?.image ?? GATEWAY_IMAGES.haproxy,
      certbotImage: raw.gateway?.certbotImage ?? GATEWAY_IMAGES.certbot,
    },
    projectKeys: raw.projectKeys ?? [],
    sshPrivateKey: raw.sshPrivateKey,
    ...(raw.l1?.external ? { l1Endpoint: { rpcHttp: raw.l1.external.rpcHttp, rpcWs: raw.l1.external.rpcWs } } : {}),
    headroomMonths: raw.headroomMonths ?? 6,
    disk: { warnPercent: raw.disk?.warnPercent ?? 85, stopPercent: raw.disk?.stopPercent ?? 95 },
    retainData: raw.retainData ?? true,
    geolocation: raw.geolocation,
    readiness: {
      wait: raw.readiness?.wait ?? true,
      timeoutMinutes: raw.readiness?.timeoutMinutes ?? 60,
      toleranceBlocks: raw.readiness?.toleranceBlocks ?? 6,
      l1ReferenceUrl: raw.readiness?.l1ReferenceUrl,
      image: raw.readiness?.image ?? READINESS_IMAGE,
    },
  };
}

// The rules already refused every image whose release cannot be told or is too old.
function releaseOf(c: ClientImage): Version {
  const r = clientRelease(c.client, c.image!, c.version, keyName(c.versionKey));
  if ("error" in r) throw new Error(`rpcstack:${keyName(c.imageKey)}: ${r.error}`);
  return r.version;
}

function resolveHost(h: RawHost): HostConfig {
  switch (h.kind) {
    case "aws":
      return { ...h, allowSshFrom: h.allowSshFrom ?? [] };
    case "ssh":
      return { ...h, port: h.port ?? 22 };
    case "local":
      return h;
  }
}
