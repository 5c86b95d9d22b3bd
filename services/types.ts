/** What each container runs, as plain data. Pulumi components and the compose exporter translate it. */
import type { SizedClient } from "../config/index.js";

export type PortPurpose = "p2p" | "rpc" | "ws" | "engine" | "metrics" | "health" | "api";

/**
 * The scrape jobs of a stack, in the order Prometheus is given them: the `job` label that alert
 * rules and dashboard panels select by (monitoring/), and what a cluster's Prometheus is told.
 */
export const METRICS_JOBS = ["geth", "lighthouse", "juno", "pathfinder", "rotation", "disk", "gateway", "usage", "gateway-cache"] as const;
export type MetricsJob = (typeof METRICS_JOBS)[number];

/** Prometheus text a port serves: the job it is scraped as, at this path. */
export interface MetricsEndpoint {
  readonly job: MetricsJob;
  readonly path: string;
}

export interface PortSpec {
  readonly container: number;
  readonly protocol: "tcp" | "udp";
  readonly purpose: PortPurpose;
  /** Published on the host; absent: reachable only on the private Docker network. */
  /** `address`: every interface (p2p), loopback (RPC on the stack's host) or a further host's private address. */
  readonly publish?: { readonly address: string; readonly port: number };
  /** What Prometheus scrapes on this port, where it serves metrics (several paths on one port: the gateway's). */
  readonly metrics?: readonly MetricsEndpoint[];
}

export interface VolumeMount {
  /** Key of a VolumeSpec in the same stack. */
  readonly volume: string;
  readonly path: string;
  readonly readOnly?: boolean;
}

/**
 * A file placed into the container. Where it comes from decides how it is shipped, so a
 * generated file can never be taken for a package path.
 */
export type FileSpec =
  /** A file of the package (`source` relative to the package root), copied as is. */
  | { readonly from: "package"; readonly path: string; readonly source: string; readonly executable?: boolean }
  /** A TypeScript entry of the package, shipped bundled into one dependency-free JavaScript file. */
  | { readonly from: "bundle"; readonly path: string; readonly source: string; readonly executable?: boolean }
  /**
   * A set of files generated at deploy time (the gateway's configuration and key map), placed
   * under `dir`: whoever deploys the spec supplies the set's files by name.
   */
  | { readonly from: "generated"; readonly dir: string; readonly set: GeneratedSet };

/** The generated file sets a spec may name. */
export type GeneratedSet = "gateway" | "keys" | "monitoring" | "grafana";

export interface HealthCheckSpec {
  /** Docker HEALTHCHECK test, e.g. ["CMD-SHELL", "..."]. */
  readonly test: readonly string[];
  readonly intervalSeconds: number;
  readonly timeoutSeconds: number;
  readonly retries: number;
  readonly startPeriodSeconds: number;
}

export type DependencyCondition = "service_started" | "service_healthy" | "service_completed_successfully";

export interface ServiceSpec {
  /** Service name: the compose service and the DNS alias on the Docker network. */
  readonly name: string;
  /** Container name on the host. */
  readonly containerName: string;
  readonly image: string;
  readonly entrypoint?: readonly string[];
  readonly command: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  /**
   * Variables whose values are secrets the deploying side supplies by name (an external L1's URL):
   * Pulumi passes them as secrets, the compose export as `${NAME}` from the operator's environment.
   */
  readonly secretEnvironment?: Readonly<Record<string, SecretName>>;
  readonly ports: readonly PortSpec[];
  readonly volumes: readonly VolumeMount[];
  readonly files: readonly FileSpec[];
  readonly healthcheck?: HealthCheckSpec;
  readonly restart: "unless-stopped" | "on-failure" | "no";
  /** Resource limits, e.g. open files for the gateway. */
  readonly ulimits?: readonly { readonly name: string; readonly soft: number; readonly hard: number }[];
  readonly user?: string;
  /** Seconds Docker waits after SIGTERM: databases need time to flush. */
  readonly stopGraceSeconds: number;
  /**
   * Where a Service spreads connections over replicas (a cluster): run in the container before it
   * is stopped, so that it leaves the Service's rotation before it stops serving. A single Docker
   * host has one replica and nothing to hand over to: no equivalent there.
   */
  readonly preStop?: readonly string[];
  readonly dependsOn: readonly { readonly service: string; readonly condition: DependencyCondition }[];
  /**
   * Runs in that service's network namespace (its loopback) instead of joining the stack's network:
   * the key sync reaches HAProxy's runtime API on 127.0.0.1 this way, and nothing else can.
   */
  readonly networkOf?: string;
  /** The node client it runs, where it is one: its needs are that client's row of the sizing table. */
  readonly client?: SizedClient;
}

export interface VolumeSpec {
  readonly key: string;
  /** Docker volume name on the host. */
  readonly name: string;
  readonly purpose: string;
  /** Kept when the stack is destroyed. */
  readonly retain: boolean;
  /** Created by another group (compose: another file), only mounted here. */
  readonly external?: boolean;
  /** On a cluster: the operator's Secret whose files it holds, instead of a volume of the stack's. */
  readonly secret?: string;
  /** Chain data: the client that writes it and the GB it must hold (config/sizing.ts chainDataGB). */
  readonly chainData?: { readonly client: SizedClient; readonly sizeGB: number };
  /** Other data kept in a claim of its own on a cluster (the usage ledger): the GB it must hold. */
  readonly sizeGB?: number;
}

/** One compose file's worth: the services and the volumes they mount. */
export interface ServiceGroup {
  readonly services: readonly ServiceSpec[];
  readonly volumes: readonly VolumeSpec[];
}

/** A role's services, each under its name (an optional one may be absent), in start order. */
export type RoleServices = Readonly<Record<string, ServiceSpec | undefined>>;

/** One role of the stack (L1, L2, readiness, gateway): its named services and their volumes. */
export interface Role<S extends RoleServices> {
  readonly services: S;
  readonly volumes: readonly VolumeSpec[];
}

/** A role's services as a list in start order, for a compose file. */
export function groupOf(role: Role<RoleServices>): ServiceGroup {
  return { services: Object.values(role.services).filter((s): s is ServiceSpec => s !== undefined), volumes: role.volumes };
}

/** Secrets a service may take by name (`secretEnvironment`). */
export const SECRET_NAMES = ["RPCSTACK_L1_HTTP_URL", "RPCSTACK_L1_WS_URL", "RPCSTACK_BADGE_SIGNING_KEY"] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** The private Docker network every service joins. */
export const DOCKER_NETWORK = "rpcstack";

/** Container log rotation, the same under Pulumi and compose: chain clients log a lot. */
export const LOG_OPTIONS: Readonly<Record<string, string>> = { "max-size": "50m", "max-file": "5" };

/**
 * What the service specs must know of the compiled gateway (gateway/, handed over by plan/): the
 * files it reads, the Lua programs it loads, and how long its checks take to put a node back in
 * rotation.
 */
export interface GatewayHosting {
  /** The key map's name among the key sync's files and on the keys volume. */
  readonly keyMapFile: string;
  /** The quota map's name, likewise. */
  readonly quotaMapFile: string;
  /** The map of calls spent before HAProxy started, which the usage keeper fills, in the config folder. */
  readonly quotaUsedFile: string;
  /** The map of the other replicas' calls per key in their rate windows (replicas sharing rates), in the config folder. */
  readonly rateOthersFile: string;
  /** The package folder of the Lua programs, and their paths within it. */
  readonly luaSourceDir: string;
  readonly luaFiles: readonly string[];
  /** Seconds from a node fit again to the gateway sending it calls (its rising checks). */
  readonly nodeBackSeconds: number;
  /** What its private metrics listener serves, as Prometheus scrapes it. */
  readonly metrics: readonly MetricsEndpoint[];
}
