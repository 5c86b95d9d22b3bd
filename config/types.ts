import type { FromSchema } from "json-schema-to-ts";
import type { configSchema } from "./schema.js";
import type { ChainKind, L2ClientName, NetworkDefaults, NetworkName } from "./networks/index.js";
import type { HistoryMode } from "./resources.js";
import type { SnapshotSettings } from "./snapshots.js";
import type { SpecPaths } from "./releases.js";
import type { Tier, TierName } from "./tiers.js";

/**
 * Keys an operator sets under `rpcstack:`, as written (before defaults): derived from the JSON
 * schema (config/schema.ts), so the schema is the one place a key's shape is written.
 */
export type RawConfig = FromSchema<typeof configSchema, { keepDefaultedPropertiesOptional: true }>;

/** Data-volume use, in percent: readiness warns above `warnPercent`, the gateway stops routing above `stopPercent`. */
export interface DiskThresholds {
  readonly warnPercent: number;
  readonly stopPercent: number;
}

/** An L1 node the stack uses instead of deploying one (`l1.external`, a secret). */
export interface L1Endpoint {
  readonly rpcHttp: string;
  readonly rpcWs: string;
}

/** `rpcstack:host` as written: one of the schema's host kinds. */
export type RawHost = NonNullable<RawConfig["host"]>;

/**
 * `diskGB`: the disk the chain data gets, instead of the tier's; `diskIops`: the aws volume's IOPS;
 * `privateAddress`: where the stack's other hosts reach this one (needed once nodes run on several).
 */
export type HostConfig =
  | { kind: "aws"; region: string; instanceType?: string; sshPublicKey: string; allowSshFrom: string[]; diskGB?: number; diskIops?: number; privateAddress?: string }
  | { kind: "ssh"; address: string; user: string; port: number; diskGB?: number; privateAddress?: string }
  | { kind: "local"; diskGB?: number; privateAddress?: string }
  | KubernetesHostConfig;

/** How the gateway is reached from outside the cluster. */
export type KubernetesExpose = { kind: "LoadBalancer" } | { kind: "NodePort"; nodePort?: number } | { kind: "Ingress"; ingressClass?: string };

/**
 * An existing cluster. `context`: of the operator's own kubeconfig, when rpcstack:kubeconfig is
 * not set; `tlsSecret`: a kubernetes.io/tls Secret in `namespace` with the domain's certificate;
 * `awaitReady: false`: objects are applied without waiting for their pods (a cluster with no
 * nodes yet, or an API server alone).
 */
export interface KubernetesHostConfig {
  kind: "kubernetes";
  context?: string;
  namespace: string;
  /** The stack makes the namespace, and `pulumi destroy` deletes it with everything in it. */
  createNamespace: boolean;
  storageClass?: string;
  expose: KubernetesExpose;
  gatewayReplicas: number;
  /** Redis or Valkey (its protocol): where the gateway replicas count quotas together. */
  counterStoreImage: string;
  tlsSecret?: string;
  awaitReady: boolean;
  /**
   * The cluster's own Prometheus (pods of `namespace`, those with all of `podLabels` when given),
   * admitted to the metrics ports; without it only the stack's own pods reach them.
   */
  metricsFrom?: { readonly namespace: string; readonly podLabels?: Readonly<Record<string, string>> };
  diskGB?: undefined;
  privateAddress?: undefined;
}

/** A further host the stack places nodes on (`hosts.<name>`), sized by its own tier. */
export type ExtraHostConfig = Extract<HostConfig, { kind: "aws" | "ssh" }> & { readonly tier: Tier; readonly privateAddress: string };

/** The host each node of a layer runs on, in order: `main` (the stack's host) or a key of `hosts`. */
export interface NodePlacement {
  readonly l1: readonly string[];
  readonly l2: readonly string[];
}

export interface ProjectKey {
  readonly name: string;
  readonly key: string;
}

/** An allowance of calls per UTC day or month for a project key or a badge project (`gateway.quotas[]`). */
export interface Quota {
  readonly name: string;
  readonly calls: number;
  readonly per: "day" | "month";
}

export interface ChainUpstreams {
  readonly rpcHttp?: string;
  readonly rpcWs?: string;
  readonly rest?: string;
  readonly grpc?: string;
}

export interface ChainHostnames {
  readonly tendermintRpc?: string;
  readonly rest?: string;
  readonly grpc?: string;
}

/** A chain the gateway relays to an external upstream (`gateway.chains[]`). */
export interface ExtraChain {
  readonly path: string;
  readonly chainId: string;
  readonly kind: ChainKind;
  readonly upstreams: ChainUpstreams;
  /** Further nodes of the same chain, each with the interfaces `upstreams` names (docs/multinode.md). */
  readonly replicas?: readonly ChainUpstreams[];
  readonly hostnames?: ChainHostnames;
}

/** Browser access, batches, key guessing, connections and the method policy (`gateway.*`). */
export interface GatewayLimits {
  readonly corsOrigins: readonly string[];
  readonly maxBatch: number;
  readonly wrongKeysPerMinute: number;
  readonly maxConnectionsPerAddress: number;
  readonly wsMaxConnectionsPerKey: number;
  readonly wsMaxSubscriptionsPerSocket: number;
  readonly wsMaxSubscriptionsPerKey: number;
  readonly filtersPerKey: number;
  readonly wsIdleTimeoutSeconds: number;
  /** Per chain path: methods (or `prefix_` families) opened or refused beyond the kind's defaults. */
  readonly methodPolicy: Readonly<Record<string, { readonly allowMethods?: readonly string[]; readonly denyMethods?: readonly string[] }>>;
  /** The response cache (`gateway.cache.*`). */
  readonly cache: GatewayCache;
}

/** `gateway.cache`: final JSON-RPC answers held in the gateway, within a byte budget. */
export interface GatewayCache {
  readonly enabled: boolean;
  /** Bytes held in all (answers, keys, per-entry overhead); default by tier (config/tiers.ts). */
  readonly maxBytes: number;
  /** Largest answer held (at least 2 MiB: full mainnet blocks). */
  readonly maxObjectBytes: number;
  /** Per chain path: false switches the cache off for that chain. */
  readonly chains: Readonly<Record<string, boolean>>;
}

export interface ReadinessConfig {
  readonly wait: boolean;
  readonly timeoutMinutes: number;
  readonly toleranceBlocks: number;
  readonly l1ReferenceUrl?: string;
  /** Image with Node.js that runs the readiness program. */
  readonly image: string;
}

/** The validated, non-secret stack settings with every default applied. Plain data, no Pulumi. */
export interface StackSettings {
  readonly network: NetworkDefaults;
  readonly tier: Tier;
  readonly host: HostConfig;
  /** Further hosts, by name; none unless `hosts` is set. */
  readonly hosts: Readonly<Record<string, ExtraHostConfig>>;
  /** Where each layer's nodes run (`nodes`): one on the stack's host unless said. */
  readonly nodes: NodePlacement;
  readonly l1: {
    readonly executionImage: string;
    /** Absent on a network without a consensus client (devnet: geth --dev seals its own blocks). */
    readonly consensusImage?: string;
    /** The releases the images run (`v1.17.5`), from the tag or the explicit version keys. */
    readonly executionRelease: string;
    readonly consensusRelease?: string;
    readonly checkpointSyncUrl?: string;
    /** geth `--history.chain`; absent where no geth of ours keeps history (devnet, external L1). */
    readonly history?: HistoryMode;
    /** The stack uses an L1 node elsewhere (`l1.external`): no L1 containers; its URLs are secrets. */
    readonly external: boolean;
  };
  readonly l2: L2Settings;
  readonly indexer: { readonly enabled: boolean; readonly image: string; readonly command: readonly string[] };
  readonly gateway: {
    readonly domain?: string;
    readonly acmeEmail?: string;
    readonly chains: readonly ExtraChain[];
    /** Calls per UTC day or month, by key name or badge project; shipped with the key sync, not in haproxy.cfg. */
    readonly quotas: readonly Quota[];
    /** Requests per second one project key may make, averaged over 10 s; over it: 429. */
    readonly rateLimitPerSecond: number;
    /** Largest request body accepted; over it: 413. */
    readonly maxBodyKiB: number;
    /** Concurrent connections HAProxy accepts; its open-file limit follows (two per connection). */
    readonly maxConnections: number;
    /** Whether the stack file set maxConnections; unset, the host's preflight may lower the default to what its Docker daemon allows. */
    readonly maxConnectionsSet: boolean;
    /** With `l1.external`: relay the L1 chain's route there (true), or serve no L1 route. */
    readonly relayExternalL1: boolean;
    /** HAProxy image. */
    readonly image: string;
    /** ACME client image (certbot, with Python's cryptography for the first certificate). */
    readonly certbotImage: string;
  } & GatewayLimits;
  readonly retainData: boolean;
  /** Where the provider serves from, for the provider manifest (e.g. "EU"). */
  readonly geolocation?: string;
  readonly readiness: ReadinessConfig;
  /** Months of growth the disk must hold beyond the nodes' size at sync. */
  readonly headroomMonths: number;
  readonly disk: DiskThresholds;
  /** Badges for front ends; absent: none are issued or accepted. */
  readonly badges?: BadgeSettings;
  /** Prometheus on the private network with rpcstack's alert rules; absent: switched off. */
  readonly monitoring?: MonitoringSettings;
}

/** `monitoring`: what Prometheus keeps and where the operator reaches it (an SSH tunnel to the host's loopback). */
export interface MonitoringSettings {
  readonly prometheusImage: string;
  readonly retentionDays: number;
  /** Prometheus drops the oldest data beyond this; counted in the host's disk check. */
  readonly retentionGB: number;
  readonly scrapeIntervalSeconds: number;
  /** Published on the host's loopback only. */
  readonly port: number;
  /** Grafana, provisioned with Prometheus and the dashboards; absent: no Grafana. */
  readonly grafana?: { readonly image: string; readonly port: number };
}

/** One project whose web pages may ask for badges (`badges.projects[]`). */
export interface BadgeProject {
  /** Its badges are counted under the key name `badge:<projectId>`, apart from any project key's. */
  readonly projectId: string;
  /** Chain ids (`ETH1`, `STRK`) its badges may call. */
  readonly chains: readonly string[];
  /** Exact web origins allowed to ask; nothing else gets a badge. */
  readonly origins: readonly string[];
  readonly lifetimeSeconds: number;
  /** Calls one badge may make over its life (a batch counts call by call). */
  readonly allowance: number;
  /** Calls per second the project's badges may make together; absent: `gateway.rateLimitPerSecond`. */
  readonly ratePerSecond?: number;
}

/** `badges`: short-lived signed keys for front ends, issued by the badge service and checked by the gateway. */
export interface BadgeSettings {
  /** Badges one client address may ask for per minute (counted at the gateway). */
  readonly perAddressPerMinute: number;
  /** Changing it makes a new signing key on the next update: every older badge stops working. */
  readonly signingKeyGeneration: number;
  readonly projects: readonly BadgeProject[];
}

interface L2Common {
  readonly image: string;
  readonly release: string;
  readonly pendingPollInterval: string;
  /** The spec version (`v0_10`) the unversioned gateway path serves on every node. */
  readonly rpcVersion: string;
  /** Every spec version the release serves, with its paths on the node (config/releases.ts). */
  readonly specVersions: Readonly<Record<string, SpecPaths>>;
  /** Restore the database from this snapshot before the node's first start; absent: sync from genesis. */
  readonly snapshot?: SnapshotSettings;
}

/** The L2 node; Juno carries the flag its release takes the poll interval under, decided once in resolution. */
export type L2Settings =
  | (L2Common & { readonly client: "juno"; readonly pollFlag: string })
  | (L2Common & { readonly client: Exclude<L2ClientName, "juno"> });

/** In memory only: the program wraps them as Pulumi secrets before any resource sees them. */
export interface StackSecrets {
  readonly projectKeys: readonly ProjectKey[];
  readonly sshPrivateKey?: string;
  /** The cluster's kubeconfig (host kind kubernetes). */
  readonly kubeconfig?: string;
  readonly l1Endpoint?: L1Endpoint;
}

export interface RpcStackConfig extends StackSettings, StackSecrets {}
