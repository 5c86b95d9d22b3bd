/** How HAProxy is configured inside its container: the gateway compiler's options from the settings. Pure. */
import type { StackSettings } from "../config/index.js";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import type { GatewayOptions } from "../gateway/types.js";
import { HEALTH_CHECK_INTERVAL_MS } from "../gateway/upstreams.js";
import { ACME_PORT, ADMIN_LOOPBACK_PORT, countersShared, GATEWAY_PATHS, METRICS_PORT, SYNC_HEALTH_PORT } from "../services/index.js";
import { badgeGatewayOptions, corsOriginsWithBadges } from "./badges.js";

/** How HAProxy is configured inside its container. */
export function gatewayOptions(settings: StackSettings): GatewayOptions {
  const cluster = settings.host.kind === "kubernetes";
  return {
    bindAddress: "0.0.0.0",
    httpsPort: 443,
    httpPort: 80,
    // Reachable on the private Docker network only: the port is never published.
    metrics: { address: "0.0.0.0", port: METRICS_PORT },
    certFile: GATEWAY_PATHS.certFile,
    filesDir: GATEWAY_PATHS.configDir,
    luaDir: GATEWAY_PATHS.luaDir,
    // On a cluster no ACME client runs (the certificate is a TLS Secret), and names resolve once, by
    // libc with the namespace's search domains, to Services whose addresses never change: HAProxy's
    // own resolver knows no search domains, and Docker's (127.0.0.11) is not there.
    acmeResponder: settings.gateway.domain && !cluster ? `acme:${ACME_PORT}` : undefined,
    resolver: cluster ? undefined : "127.0.0.11:53",
    adminSocket: GATEWAY_PATHS.adminSocket,
    adminLoopbackPort: ADMIN_LOOPBACK_PORT,
    keyMapFile: GATEWAY_PATHS.keyMap,
    quotaMapFile: GATEWAY_PATHS.quotaMap,
    certSocket: GATEWAY_PATHS.certSocket,
    rateLimitPerSecond: settings.gateway.rateLimitPerSecond,
    maxBodyBytes: settings.gateway.maxBodyKiB * 1024,
    domain: settings.gateway.domain,
    corsOrigins: corsOriginsWithBadges(settings),
    maxBatch: settings.gateway.maxBatch,
    wrongKeysPerMinute: settings.gateway.wrongKeysPerMinute,
    maxConnectionsPerAddress: settings.gateway.maxConnectionsPerAddress,
    wsMaxConnectionsPerKey: settings.gateway.wsMaxConnectionsPerKey,
    wsMaxSubscriptionsPerSocket: settings.gateway.wsMaxSubscriptionsPerSocket,
    wsMaxSubscriptionsPerKey: settings.gateway.wsMaxSubscriptionsPerKey,
    filtersPerKey: settings.gateway.filtersPerKey,
    wsIdleTimeoutSeconds: settings.gateway.wsIdleTimeoutSeconds,
    checkIntervalMs: HEALTH_CHECK_INTERVAL_MS,
    caFile: "/etc/ssl/certs/ca-certificates.crt",
    maxConnections: settings.gateway.maxConnections,
    runAs: "haproxy",
    // Each node's rotation state, from the readiness service, on the private metrics listener.
    nodeMetricsUrl: `http://sync-health:${SYNC_HEALTH_PORT}/metrics`,
    ...(settings.badges ? { badges: badgeGatewayOptions(settings) } : {}),
    // Replicas that count per-key rates together (the usage keepers' counter store).
    ...(countersShared(settings) ? { sharedRates: true } : {}),
    ...(settings.gateway.cache?.enabled !== false && settings.gateway.cache
      ? { cache: { maxBytes: settings.gateway.cache.maxBytes, maxObjectBytes: settings.gateway.cache.maxObjectBytes, pollIntervalMs: CACHE_DEFAULTS.pollIntervalMs } }
      : {}),
  };
}

