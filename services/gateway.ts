/** The gateway's containers: HAProxy, its first certificate, and the ACME client. Pure data. */
import { dirname } from "node:path";
import { publicHost, type StackSettings } from "../config/index.js";
import { badgeService } from "./badges.js";
import { bashHttpGet } from "./health.js";
import type { FileSpec, GatewayHosting, Role, ServiceSpec, VolumeSpec } from "./types.js";
import { COUNTER_STORE, counterStoreService, countersShared, LEAVE_ROTATION_SECONDS, usagePort, usageService, usageVolume } from "./usage.js";

export const GATEWAY_PATHS = {
  configDir: "/usr/local/etc/haproxy",
  luaDir: "/usr/local/etc/haproxy/lua",
  certFile: "/certs/gateway.pem",
  // In the gateway container only: the runtime API at level admin is never shared.
  adminSocket: "/var/run/haproxy-admin.sock",
  // On the volume shared with the ACME client: it can hand over a certificate there, nothing else.
  certSocket: "/var/run/haproxy/cert.sock",
  acmeDir: "/acme",
  // On a volume: the key sync writes it, HAProxy reads it when it starts.
  keyMap: "/var/lib/rpcstack-keys/keys.map",
  // Beside it, for the same reason: quotas change live too (gateway/quotas.ts).
  quotaMap: "/var/lib/rpcstack-keys/quotas.map",
  // In the key sync's container: the deployed key map and the script that applies it.
  desiredKeys: "/run/rpcstack-keys",
  keySync: "/usr/local/lib/rpcstack/key-sync.sh",
} as const;
export const METRICS_PORT = 8405;
export const ACME_PORT = 8888;
/** The runtime API on HAProxy's own loopback, for the key sync only (gateway/keys/sync.sh). */
export const ADMIN_LOOPBACK_PORT = 8406;

/** The names the certificate covers: the domain (or localhost) and every Cosmos hostname. */
export function certificateNames(settings: Pick<StackSettings, "gateway" | "host">): string[] {
  const hostnames = settings.gateway.chains.flatMap((c) => Object.values(c.hostnames ?? {}));
  return [publicHost(settings), ...hostnames];
}

/** Open files HAProxy needs for `maxConnections`: two per connection plus listeners, checks, logs. */
export const openFilesFor = (maxConnections: number) => 2 * maxConnections + 1024;

/** The key map and quota map, kept in step by the key sync. */
const KEYS_VOLUME = "keys";

export function gatewayVolumes(settings: Pick<StackSettings, "retainData" | "gateway">): VolumeSpec[] {
  return [
    { key: "certs", name: "rpcstack-gateway-certs", purpose: "the gateway's TLS certificate", retain: settings.retainData },
    // ACME account and certificates: issuers rate-limit new ones, so they are kept like chain data.
    ...(settings.gateway.domain ? [{ key: "letsencrypt", name: "rpcstack-gateway-acme", purpose: "ACME account and certificates", retain: settings.retainData }] : []),
    { key: "haproxy-run", name: "rpcstack-gateway-run", purpose: "the socket through which the ACME client hands HAProxy a renewed certificate", retain: settings.retainData },
    { key: KEYS_VOLUME, name: "rpcstack-gateway-keys", purpose: "the key map (digests of the project keys) and the quota map, kept in step with the running gateway by the key sync", retain: settings.retainData },
    usageVolume(settings.retainData),
  ];
}

/** The gateway's containers by role: the first certificate, HAProxy, the key sync, the usage keeper, with a domain the ACME client, with badges their service. */
export type GatewayRole = Role<{ readonly certInit: ServiceSpec; readonly haproxy: ServiceSpec; readonly keySync: ServiceSpec; readonly usage: ServiceSpec; readonly acme?: ServiceSpec; readonly badges?: ServiceSpec; readonly counters?: ServiceSpec }>;

/**
 * `haproxyEnvironment`: what the compiled configuration needs in HAProxy's process environment;
 * `badgeProjects`: the badge service's projects (RPCSTACK_BADGE_PROJECTS), where badges are configured.
 */
export function gatewayRole(settings: StackSettings, hosting: GatewayHosting, haproxyEnvironment: Readonly<Record<string, string>> = {}, badgeProjects?: string): GatewayRole {
  const names = certificateNames(settings);
  const certInit: ServiceSpec = {
    name: "cert-init",
    containerName: "rpcstack-cert-init",
    image: settings.gateway.certbotImage,
    entrypoint: ["python3"],
    command: [`${GATEWAY_PATHS.acmeDir}/selfsigned.py`, GATEWAY_PATHS.certFile, names.join(",")],
    environment: {},
    ports: [],
    volumes: [{ volume: "certs", path: "/certs" }],
    files: [{ from: "package", path: `${GATEWAY_PATHS.acmeDir}/selfsigned.py`, source: "gateway/acme/selfsigned.py" }],
    restart: "no",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
  // The rules require an ACME account email with a domain: a public stack gets both.
  const acmeEmail = settings.gateway.domain ? settings.gateway.acmeEmail : undefined;
  const acme: ServiceSpec | undefined = acmeEmail
    ? {
        name: "acme",
        containerName: "rpcstack-acme",
        image: settings.gateway.certbotImage,
        entrypoint: ["/bin/sh"],
        command: [`${GATEWAY_PATHS.acmeDir}/acme.sh`],
        environment: {
          ACME_DOMAINS: names.join(","),
          ACME_EMAIL: acmeEmail,
          ACME_PORT: String(ACME_PORT),
          CERT_FILE: GATEWAY_PATHS.certFile,
          HAPROXY_CERT_SOCKET: GATEWAY_PATHS.certSocket,
        },
        ports: [{ container: ACME_PORT, protocol: "tcp", purpose: "api" }],
        volumes: [
          { volume: "certs", path: "/certs" },
          { volume: "letsencrypt", path: "/etc/letsencrypt" },
          { volume: "haproxy-run", path: "/var/run/haproxy" },
        ],
        files: [
          { from: "package", path: `${GATEWAY_PATHS.acmeDir}/acme.sh`, source: "gateway/acme/acme.sh", executable: true },
          { from: "package", path: `${GATEWAY_PATHS.acmeDir}/deploy.sh`, source: "gateway/acme/deploy.sh", executable: true },
          { from: "package", path: `${GATEWAY_PATHS.acmeDir}/haproxy_cert.py`, source: "gateway/acme/haproxy_cert.py" },
        ],
        restart: "unless-stopped",
        stopGraceSeconds: 30,
        dependsOn: [{ service: "haproxy", condition: "service_started" }],
      }
    : undefined;
  const haproxy: ServiceSpec = {
    name: "haproxy",
    containerName: "rpcstack-gateway",
    image: settings.gateway.image,
    // The first start finds no key map or quota map on the new volume: empty ones until the key sync fills them.
    entrypoint: ["/bin/sh", "-c"],
    command: [`for m in ${GATEWAY_PATHS.keyMap} ${GATEWAY_PATHS.quotaMap}; do [ -e $m ] || : > $m; done; exec haproxy -W -db -f ${GATEWAY_PATHS.configDir}/haproxy.cfg`],
    // What the compiled configuration's buffers need (plan/index.ts, gateway/limits.ts).
    environment: { ...haproxyEnvironment },
    ports: [
      { container: 443, protocol: "tcp", purpose: "rpc", publish: { address: "0.0.0.0", port: 443 } },
      { container: 80, protocol: "tcp", purpose: "rpc", publish: { address: "0.0.0.0", port: 80 } },
      { container: METRICS_PORT, protocol: "tcp", purpose: "metrics", metrics: hosting.metrics },
      usagePort,
    ],
    volumes: [
      { volume: "certs", path: "/certs", readOnly: true },
      { volume: "haproxy-run", path: "/var/run/haproxy" },
      { volume: KEYS_VOLUME, path: dirname(GATEWAY_PATHS.keyMap) },
    ],
    files: [
      // haproxy.cfg, the Lua programs' data and the error pages, as the gateway compiler writes them.
      { from: "generated", dir: GATEWAY_PATHS.configDir, set: "gateway" },
      // The Lua programs, as the package has them.
      ...hosting.luaFiles.map((f): FileSpec => ({ from: "package", path: `${GATEWAY_PATHS.luaDir}/${f}`, source: `${hosting.luaSourceDir}/${f}` })),
    ],
    healthcheck: bashHttpGet(METRICS_PORT, "/metrics", [200], 10),
    restart: "unless-stopped",
    // Starts as root to bind 80/443 and open the runtime socket, then runs as `haproxy`.
    user: "root",
    // HAProxy refuses to start below ~2 descriptors per connection, and Docker refuses a limit
    // above the host's hard limit: ask for what maxConnections needs, no more.
    ulimits: [{ name: "nofile", soft: openFilesFor(settings.gateway.maxConnections), hard: openFilesFor(settings.gateway.maxConnections) }],
    stopGraceSeconds: 30,
    // Serving on while kube-proxy takes the replica out (new connections meet a refusal otherwise),
    // then a soft stop (SIGUSR1 to the master): the listeners close, calls in flight finish, idle
    // keep-alive connections are closed cleanly. SIGTERM would be a hard stop, cutting them.
    preStop: ["/bin/sh", "-c", `sleep ${LEAVE_ROTATION_SECONDS}; kill -USR1 1; while kill -0 1 2>/dev/null; do sleep 1; done`],
    dependsOn: [{ service: "cert-init", condition: "service_completed_successfully" }],
  };
  // Keys and quotas change here, not in HAProxy's container: a change replaces this one-shot only.
  const keySync: ServiceSpec = {
    name: "key-sync",
    containerName: "rpcstack-key-sync",
    image: settings.gateway.image,
    entrypoint: ["/bin/bash"],
    command: [GATEWAY_PATHS.keySync],
    environment: {
      KEY_MAP: GATEWAY_PATHS.keyMap,
      DESIRED: `${GATEWAY_PATHS.desiredKeys}/${hosting.keyMapFile}`,
      QUOTA_MAP: GATEWAY_PATHS.quotaMap,
      DESIRED_QUOTAS: `${GATEWAY_PATHS.desiredKeys}/${hosting.quotaMapFile}`,
      ADMIN_PORT: String(ADMIN_LOOPBACK_PORT),
    },
    ports: [],
    volumes: [{ volume: KEYS_VOLUME, path: dirname(GATEWAY_PATHS.keyMap) }],
    files: [
      { from: "package", path: GATEWAY_PATHS.keySync, source: "gateway/keys/sync.sh", executable: true },
      { from: "generated", dir: GATEWAY_PATHS.desiredKeys, set: "keys" },
    ],
    restart: "no",
    user: "root",
    stopGraceSeconds: 10,
    dependsOn: [{ service: "haproxy", condition: "service_started" }],
    networkOf: "haproxy",
  };
  // The readiness image serves both: Node.js, nothing else needed.
  const badges = settings.badges && badgeProjects !== undefined ? badgeService(settings.readiness.image, badgeProjects) : undefined;
  // Replicas that share a counter store (onCluster makes it) reach it here.
  const shared = countersShared(settings) ? { store: `redis://${COUNTER_STORE.name}:${COUNTER_STORE.port}`, rateOthersMap: `${GATEWAY_PATHS.configDir}/${hosting.rateOthersFile}` } : undefined;
  const usage = usageService(settings.readiness.image, ADMIN_LOOPBACK_PORT, `${GATEWAY_PATHS.configDir}/${hosting.quotaUsedFile}`, shared);
  return onCluster(settings, { services: { certInit, haproxy, keySync, usage, ...(acme ? { acme } : {}), ...(badges ? { badges } : {}) }, volumes: gatewayVolumes(settings) });
}

/**
 * The gateway as a cluster runs it (host kind kubernetes): HAProxy reads the key map mounted from
 * a Secret (no key sync keeps a volume in step: a key change rolls the pods), and with the
 * operator's TLS Secret the first certificate is copied from it instead of made self-signed.
 */
function onCluster(settings: StackSettings, role: GatewayRole): GatewayRole {
  if (settings.host.kind !== "kubernetes") return role;
  const { certInit, haproxy } = role.services;
  // Replicas count quotas together in a store they share (the keepers' --store).
  if (countersShared(settings)) role = { ...role, services: { ...role.services, counters: counterStoreService(settings.host.counterStoreImage) } };
  const keysFromSecret: ServiceSpec = {
    ...haproxy,
    volumes: haproxy.volumes.filter((m) => m.volume !== KEYS_VOLUME),
    files: [...haproxy.files, { from: "generated", dir: dirname(GATEWAY_PATHS.keyMap), set: "keys" }],
  };
  const tlsSecret = settings.host.tlsSecret;
  if (!tlsSecret) return { ...role, services: { ...role.services, haproxy: keysFromSecret } };
  const certFromSecret: ServiceSpec = {
    ...certInit,
    name: "cert-from-secret",
    image: settings.gateway.image,
    entrypoint: ["/bin/sh", "-c"],
    command: [`cat /tls/tls.crt /tls/tls.key > ${GATEWAY_PATHS.certFile}`],
    volumes: [...certInit.volumes, { volume: "tls", path: "/tls", readOnly: true }],
    files: [],
  };
  return {
    services: { ...role.services, certInit: certFromSecret, haproxy: keysFromSecret },
    volumes: [...role.volumes, { key: "tls", name: tlsSecret, purpose: "the operator's TLS certificate and key", retain: true, secret: tlsSecret }],
  };
}
