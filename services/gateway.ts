/** The gateway's containers: HAProxy, its first certificate, and the ACME client. Pure data. */
import type { StackSettings } from "../config/index.js";
import { ERROR_STATUS_CODES, type GatewayOptions } from "../gateway/build.js";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { bashHttpGet } from "./health.js";
import type { ServiceGroup, ServiceSpec, VolumeSpec } from "./types.js";

export const GATEWAY_PATHS = {
  configDir: "/usr/local/etc/haproxy",
  certFile: "/certs/gateway.pem",
  adminSocket: "/var/run/haproxy/admin.sock",
  acmeDir: "/acme",
} as const;
export const METRICS_PORT = 8405;
const ACME_PORT = 8888;

/** The names the certificate covers: the domain (or localhost) and every Cosmos hostname. */
export function certificateNames(settings: StackSettings): string[] {
  const hostnames = settings.gateway.chains.flatMap((c) => Object.values(c.hostnames ?? {}));
  return [settings.gateway.domain ?? "localhost", ...hostnames];
}

/** Open files HAProxy needs for `maxConnections`: two per connection plus listeners, checks, logs. */
export const openFilesFor = (maxConnections: number) => 2 * maxConnections + 1024;

/** How HAProxy is configured inside its container. */
export function gatewayOptions(settings: StackSettings): GatewayOptions {
  return {
    bindAddress: "0.0.0.0",
    httpsPort: 443,
    httpPort: 80,
    // Reachable on the private Docker network only: the port is never published.
    metrics: { address: "0.0.0.0", port: METRICS_PORT },
    certFile: GATEWAY_PATHS.certFile,
    filesDir: GATEWAY_PATHS.configDir,
    acmeResponder: settings.gateway.domain ? `acme:${ACME_PORT}` : undefined,
    resolver: "127.0.0.11:53",
    adminSocket: GATEWAY_PATHS.adminSocket,
    rateLimitPerSecond: settings.gateway.rateLimitPerSecond,
    maxBodyBytes: settings.gateway.maxBodyKiB * 1024,
    domain: settings.gateway.domain,
    corsOrigins: settings.gateway.corsOrigins,
    maxBatch: settings.gateway.maxBatch,
    wrongKeysPerMinute: settings.gateway.wrongKeysPerMinute,
    maxConnectionsPerAddress: settings.gateway.maxConnectionsPerAddress,
    wsMaxConnectionsPerKey: settings.gateway.wsMaxConnectionsPerKey,
    wsIdleTimeoutSeconds: settings.gateway.wsIdleTimeoutSeconds,
    checkIntervalMs: 5000,
    caFile: "/etc/ssl/certs/ca-certificates.crt",
    maxConnections: settings.gateway.maxConnections,
    runAs: "haproxy",
    ...(settings.gateway.cache?.enabled !== false && settings.gateway.cache
      ? { cache: { maxBytes: settings.gateway.cache.maxBytes, maxObjectBytes: settings.gateway.cache.maxObjectBytes, pollIntervalMs: CACHE_DEFAULTS.pollIntervalMs } }
      : {}),
  };
}

export function gatewayVolumes(settings: StackSettings): VolumeSpec[] {
  return [
    { key: "certs", name: "rpcstack-gateway-certs", purpose: "the gateway's TLS certificate", retain: settings.retainData },
    // ACME account and certificates: issuers rate-limit new ones, so they are kept like chain data.
    ...(settings.gateway.domain ? [{ key: "letsencrypt", name: "rpcstack-gateway-acme", purpose: "ACME account and certificates", retain: settings.retainData }] : []),
    { key: "haproxy-run", name: "rpcstack-gateway-run", purpose: "HAProxy runtime API socket, shared with the ACME client", retain: settings.retainData },
  ];
}

export function gatewayServices(settings: StackSettings): ServiceGroup {
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
    files: [{ path: `${GATEWAY_PATHS.acmeDir}/selfsigned.py`, source: "gateway/acme/selfsigned.py" }],
    restart: "no",
    stopGraceSeconds: 10,
    dependsOn: [],
  };
  const acme: ServiceSpec | undefined = settings.gateway.domain
    ? {
        name: "acme",
        containerName: "rpcstack-acme",
        image: settings.gateway.certbotImage,
        entrypoint: ["/bin/sh"],
        command: [`${GATEWAY_PATHS.acmeDir}/acme.sh`],
        environment: {
          ACME_DOMAINS: names.join(","),
          ACME_EMAIL: settings.gateway.acmeEmail!,
          ACME_PORT: String(ACME_PORT),
          CERT_FILE: GATEWAY_PATHS.certFile,
          HAPROXY_SOCKET: GATEWAY_PATHS.adminSocket,
        },
        ports: [{ container: ACME_PORT, protocol: "tcp", purpose: "api" }],
        volumes: [
          { volume: "certs", path: "/certs" },
          { volume: "letsencrypt", path: "/etc/letsencrypt" },
          { volume: "haproxy-run", path: "/var/run/haproxy" },
        ],
        files: [
          { path: `${GATEWAY_PATHS.acmeDir}/acme.sh`, source: "gateway/acme/acme.sh", executable: true },
          { path: `${GATEWAY_PATHS.acmeDir}/deploy.sh`, source: "gateway/acme/deploy.sh", executable: true },
          { path: `${GATEWAY_PATHS.acmeDir}/haproxy_cert.py`, source: "gateway/acme/haproxy_cert.py" },
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
    command: ["haproxy", "-W", "-db", "-f", `${GATEWAY_PATHS.configDir}/haproxy.cfg`],
    environment: {},
    ports: [
      { container: 443, protocol: "tcp", purpose: "rpc", publish: { address: "0.0.0.0", port: 443 } },
      { container: 80, protocol: "tcp", purpose: "rpc", publish: { address: "0.0.0.0", port: 80 } },
      { container: METRICS_PORT, protocol: "tcp", purpose: "metrics" },
    ],
    volumes: [
      { volume: "certs", path: "/certs", readOnly: true },
      { volume: "haproxy-run", path: "/var/run/haproxy" },
    ],
    files: [
      { path: `${GATEWAY_PATHS.configDir}/haproxy.cfg`, source: "", generated: "haproxy.cfg" },
      { path: `${GATEWAY_PATHS.configDir}/keys.map`, source: "", generated: "keys.map" },
      { path: `${GATEWAY_PATHS.configDir}/policy.lua`, source: "", generated: "policy.lua" },
      ...(settings.gateway.cache?.enabled !== false && settings.gateway.cache ? [{ path: `${GATEWAY_PATHS.configDir}/cache.lua`, source: "", generated: "cache.lua" }] : []),
      ...ERROR_STATUS_CODES.map((s) => ({ path: `${GATEWAY_PATHS.configDir}/errors/${s}.http`, source: "", generated: `errors/${s}.http` })),
    ],
    healthcheck: bashHttpGet(METRICS_PORT, "/metrics", [200], 10),
    restart: "unless-stopped",
    // Starts as root to bind 80/443 and open the runtime socket, then runs as `haproxy`.
    user: "root",
    // HAProxy refuses to start below ~2 descriptors per connection, and Docker refuses a limit
    // above the host's hard limit: ask for what maxConnections needs, no more.
    ulimits: [{ name: "nofile", soft: openFilesFor(settings.gateway.maxConnections), hard: openFilesFor(settings.gateway.maxConnections) }],
    stopGraceSeconds: 30,
    dependsOn: [{ service: "cert-init", condition: "service_completed_successfully" }],
  };
  return { services: acme ? [certInit, haproxy, acme] : [certInit, haproxy], volumes: gatewayVolumes(settings) };
}
