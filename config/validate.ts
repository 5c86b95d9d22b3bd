/**
 * Stack config -> validated, defaulted RpcStackConfig. Pure: the caller hands in the raw
 * `rpcstack:*` entries (strings, as Pulumi stores them) and a way to ask which are secrets.
 */
import Ajv, { type ErrorObject } from "ajv";
import addFormats from "ajv-formats";
import { ConfigError, NAMESPACE, keyName, problem } from "./errors.js";
import { NETWORKS } from "./networks/index.js";
import { COUNTER_STORE_IMAGE, GATEWAY_IMAGES, NODE_RUNTIME_IMAGE } from "./networks/images.js";
import { clientRelease, junoPollFlag, specVersionsOf, type ClientName } from "./releases.js";
import { clientImages, crossFieldProblems, l2ClientOf, type ClientImage } from "./rules.js";
import { formatVersion, type Version } from "./versions.js";
import { STRUCTURED_KEYS, configSchema } from "./schema.js";
import { sshHost } from "./hostSchema.js";
import { CACHE_BUDGET_BYTES, TIERS, type TierName } from "./tiers.js";
import type { L2ClientName, NetworkName } from "./networks/index.js";
import type { BadgeSettings, ExtraHostConfig, HostConfig, KubernetesExpose, L2Settings, RawConfig, RawHost, RpcStackConfig } from "./types.js";
import { externalL1Problems } from "./nodeRules.js";
import { sizingProblems } from "./sizing.js";
import { monitoringProblems, resolveMonitoring } from "./monitoring.js";
import { MAIN_HOST, placementProblems } from "./placement.js";
import { resolveSnapshot, type RawSnapshot } from "./snapshots.js";

const ajv = new Ajv({ allErrors: true, verbose: true, discriminator: true, strict: true, strictRequired: false });
addFormats(ajv, ["uri", "email"]);
ajv.addKeyword({ keyword: "x-hint", schemaType: "string" });
ajv.addKeyword({ keyword: "x-secret", schemaType: "boolean" });
ajv.addKeyword({ keyword: "x-key", schemaType: "string" });
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
  // A key's name that breaks its pattern is told by the pattern's own error; ajv adds a second, bare one.
  if (!validateSchema(raw)) problems.push(...(validateSchema.errors ?? []).filter((e) => e.keyword !== "propertyNames").map(formatAjvError));
  problems.push(...crossFieldProblems(raw, source.isSecret ?? (() => undefined), !source.withoutSecrets));
  problems.push(...externalL1Problems(raw, source.isSecret ?? (() => undefined)));
  problems.push(...placementProblems(raw), ...monitoringProblems(raw));
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
      raw[key] = shorthand(key, JSON.parse(value));
    } catch {
      problems.push(problem([key], "must be structured YAML (an object, list or boolean), not a plain string"));
    }
  }
  return { raw: raw as RawConfig, problems };
}

/** `l2.snapshot: latest` (or an https URL), the form the docs' prose uses, is `l2.snapshot: { url: ... }`. */
const shorthand = (key: string, v: unknown): unknown =>
  key === "l2" && typeof (v as { snapshot?: unknown } | null)?.snapshot === "string" ? { ...(v as object), snapshot: { url: (v as { snapshot: string }).snapshot } } : v;

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
        ? problem([...segments, "kind"], `must be one of ${segments[0] === "hosts" ? "aws, ssh" : "aws, ssh, local, kubernetes"} (got ${JSON.stringify(params.tagValue)})`)
        : problem([...segments, "kind"], "is required and must be a string");
    case "pattern":
    case "format":
      return problem(segments, `${typeof hint === "string" ? hint : `must match ${params.pattern ?? params.format}`} (got ${safeEcho(segments, e.data)})`);
    case "type":
      return problem(segments, typeof hint === "string" ? hint : `must be ${article(String(params.type))}`);
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
  if (k.startsWith("projectKeys") || k === "sshPrivateKey" || k === "kubeconfig" || k.startsWith("l1.external")) return "a value that is not shown";
  return JSON.stringify(data);
}

const article = (t: string) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`);
const dedupe = (xs: string[]) => [...new Set(xs)];

/** The L2 settings, with Juno's poll flag chosen for its release (the rules refused releases without one). */
function resolveL2(client: L2ClientName, image: string, version: Version, pendingPollInterval: string, rpcVersion: string, network: NetworkName, raw?: RawSnapshot): L2Settings {
  const release = formatVersion(version);
  // The rules refused a snapshot on devnet or for a client without one.
  const snapshot = raw && client !== "starknet-devnet" && network !== "devnet" ? { snapshot: resolveSnapshot(raw, client, network) } : {};
  // The rules refused a release whose spec versions are not recorded, or that lacks the pinned one.
  const served = specVersionsOf(client, version);
  if ("error" in served) throw new Error(`rpcstack:l2.rpcVersion: ${served.error}`);
  const common = { image, release, pendingPollInterval, rpcVersion, specVersions: served.versions, ...snapshot };
  if (client !== "juno") return { client, ...common };
  const poll = junoPollFlag(version);
  if ("error" in poll) throw new Error(`rpcstack:l2.pendingPollInterval: cannot be honoured: ${poll.error}`);
  return { client, ...common, pollFlag: poll.flag };
}

// The network-independent defaults live in the schema, beside each key.
const S = configSchema.properties;
const G = S.gateway.properties;
const R = S.readiness.properties;
const SSH_PORT_DEFAULT = sshHost.properties.port.default;

function resolve(raw: RawConfig): RpcStackConfig {
  // Schema and rules have passed, so required fields are present.
  const network = NETWORKS[raw.network!];
  const client = l2ClientOf(raw, network);
  const images = clientImages(raw, network);
  const release = (c: ClientName) => {
    const found = images.find((i) => i.client === c);
    return found ? releaseOf(found) : undefined;
  };
  const [geth, lighthouse, l2] = [release("geth")!, release("lighthouse"), release(client)!];
  const pendingPollInterval = raw.l2?.pendingPollInterval ?? S.l2.properties.pendingPollInterval.default;
  const rpcVersion = raw.l2?.rpcVersion ?? S.l2.properties.rpcVersion.default;
  const external = raw.l1?.external !== undefined;
  const consensusImage = external ? undefined : raw.l1?.consensusImage ?? network.l1.consensusImage;
  return {
    network,
    // A trial chain brings its own (small) requirements instead of a hardware tier.
    tier: network.dev?.requirements ?? TIERS[raw.tier!],
    host: resolveHost(raw.host!),
    hosts: resolveHosts(raw),
    nodes: { l1: external ? [] : (raw.nodes?.l1 ?? [MAIN_HOST]), l2: raw.nodes?.l2 ?? [MAIN_HOST] },
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
    l2: resolveL2(client, raw.l2?.image ?? network.l2.images[client]!, l2, pendingPollInterval, rpcVersion, network.name, raw.l2?.snapshot),
    indexer: {
      enabled: raw.indexer?.enabled ?? S.indexer.properties.enabled.default,
      image: raw.indexer?.image ?? network.indexer.image,
      command: raw.indexer?.command ?? network.indexer.command,
    },
    gateway: {
      domain: raw.gateway?.domain,
      acmeEmail: raw.gateway?.acmeEmail,
      chains: raw.gateway?.chains ?? [],
      quotas: raw.gateway?.quotas ?? [],
      rateLimitPerSecond: raw.gateway?.rateLimitPerSecond ?? G.rateLimitPerSecond.default,
      maxBodyKiB: raw.gateway?.maxBodyKiB ?? G.maxBodyKiB.default,
      corsOrigins: raw.gateway?.corsOrigins ?? G.corsOrigins.default,
      maxBatch: raw.gateway?.maxBatch ?? G.maxBatch.default,
      wrongKeysPerMinute: raw.gateway?.wrongKeysPerMinute ?? G.wrongKeysPerMinute.default,
      maxConnectionsPerAddress: raw.gateway?.maxConnectionsPerAddress ?? G.maxConnectionsPerAddress.default,
      wsMaxConnectionsPerKey: raw.gateway?.wsMaxConnectionsPerKey ?? G.wsMaxConnectionsPerKey.default,
      wsMaxSubscriptionsPerSocket: raw.gateway?.wsMaxSubscriptionsPerSocket ?? G.wsMaxSubscriptionsPerSocket.default,
      wsMaxSubscriptionsPerKey: raw.gateway?.wsMaxSubscriptionsPerKey ?? G.wsMaxSubscriptionsPerKey.default,
      filtersPerKey: raw.gateway?.filtersPerKey ?? G.filtersPerKey.default,
      wsIdleTimeoutSeconds: raw.gateway?.wsIdleTimeoutSeconds ?? G.wsIdleTimeoutSeconds.default,
      methodPolicy: raw.gateway?.methodPolicy ?? {},
      cache: {
        enabled: raw.gateway?.cache?.enabled ?? G.cache.properties.enabled.default,
        maxBytes: raw.gateway?.cache?.maxBytes ?? CACHE_BUDGET_BYTES[(network.dev?.requirements ?? TIERS[raw.tier!]).name],
        maxObjectBytes: raw.gateway?.cache?.maxObjectBytes ?? G.cache.properties.maxObjectBytes.default,
        chains: raw.gateway?.cache?.chains ?? {},
      },
      maxConnections: raw.gateway?.maxConnections ?? G.maxConnections.default,
      maxConnectionsSet: raw.gateway?.maxConnections !== undefined,
      relayExternalL1: raw.gateway?.relayExternalL1 ?? G.relayExternalL1.default,
      image: raw.gateway?.image ?? GATEWAY_IMAGES.haproxy,
      certbotImage: raw.gateway?.certbotImage ?? GATEWAY_IMAGES.certbot,
    },
    projectKeys: raw.projectKeys ?? [],
    sshPrivateKey: raw.sshPrivateKey,
    kubeconfig: raw.kubeconfig,
    ...(raw.l1?.external ? { l1Endpoint: { rpcHttp: raw.l1.external.rpcHttp, rpcWs: raw.l1.external.rpcWs } } : {}),
    headroomMonths: raw.headroomMonths ?? S.headroomMonths.default,
    disk: { warnPercent: raw.disk?.warnPercent ?? S.disk.properties.warnPercent.default, stopPercent: raw.disk?.stopPercent ?? S.disk.properties.stopPercent.default },
    retainData: raw.retainData ?? S.retainData.default,
    ...(raw.badges ? { badges: resolveBadges(raw.badges) } : {}),
    ...((m) => (m ? { monitoring: m } : {}))(resolveMonitoring(raw)),
    geolocation: raw.geolocation,
    readiness: {
      wait: raw.readiness?.wait ?? R.wait.default,
      timeoutMinutes: raw.readiness?.timeoutMinutes ?? R.timeoutMinutes.default,
      toleranceBlocks: raw.readiness?.toleranceBlocks ?? R.toleranceBlocks.default,
      l1ReferenceUrl: raw.readiness?.l1ReferenceUrl,
      image: raw.readiness?.image ?? NODE_RUNTIME_IMAGE,
    },
  };
}

const B = S.badges.properties;

function resolveBadges(raw: NonNullable<RawConfig["badges"]>): BadgeSettings {
  const lifetime = raw.lifetimeSeconds ?? B.lifetimeSeconds.default;
  return {
    perAddressPerMinute: raw.perAddressPerMinute ?? B.perAddressPerMinute.default,
    signingKeyGeneration: raw.signingKeyGeneration ?? B.signingKeyGeneration.default,
    projects: raw.projects.map((p) => ({
      projectId: p.projectId,
      chains: p.chains,
      origins: p.origins,
      lifetimeSeconds: p.lifetimeSeconds ?? lifetime,
      allowance: p.allowance ?? B.projects.items.properties.allowance.default,
      ...(p.ratePerSecond !== undefined ? { ratePerSecond: p.ratePerSecond } : {}),
    })),
  };
}

// The rules already refused every image whose release cannot be told or is too old.
function releaseOf(c: ClientImage): Version {
  const r = clientRelease(c.client, c.image!, c.version, keyName(c.versionKey));
  if ("error" in r) throw new Error(`rpcstack:${keyName(c.imageKey)}: ${r.error}`);
  return r.version;
}

/** `hosts` as the schema and rules let it through: aws or ssh hosts with a private address and maybe their own tier. */
type RawExtraHost = Extract<RawHost, { kind: "aws" | "ssh" }> & { tier?: TierName; privateAddress: string };

function resolveHosts(raw: RawConfig): Record<string, ExtraHostConfig> {
  const hosts = (raw.hosts ?? {}) as Record<string, RawExtraHost>;
  return Object.fromEntries(Object.entries(hosts).map(([name, h]) => [name, { ...(resolveHost(h) as Extract<HostConfig, { kind: "aws" | "ssh" }>), tier: TIERS[h.tier ?? raw.tier!], privateAddress: h.privateAddress }]));
}

function resolveHost(h: RawHost): HostConfig {
  switch (h.kind) {
    case "aws":
      return { ...h, allowSshFrom: h.allowSshFrom ?? [] };
    case "ssh":
      return { ...h, port: h.port ?? SSH_PORT_DEFAULT };
    case "local":
      return h;
    case "kubernetes": {
      const e = h.expose ?? {};
      const kind = e.kind ?? "LoadBalancer";
      const expose: KubernetesExpose =
        kind === "NodePort" ? { kind, ...(e.nodePort === undefined ? {} : { nodePort: e.nodePort }) } : kind === "Ingress" ? { kind, ...(e.ingressClass === undefined ? {} : { ingressClass: e.ingressClass }) } : { kind };
      return { ...h, namespace: h.namespace ?? "rpcstack", createNamespace: h.createNamespace ?? false, expose, gatewayReplicas: h.gatewayReplicas ?? 2, counterStoreImage: h.counterStoreImage ?? COUNTER_STORE_IMAGE, awaitReady: h.awaitReady ?? true };
    }
  }
}
