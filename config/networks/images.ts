/**
 * Image pins shared by both networks. Bump them here, never to a moving tag, together with the
 * flag list the pin is checked against (test/fixtures/flags/) and the pin table of docs/configuration.md; release
 * floors and version-dependent flags live in config/releases.ts.
 */
export const IMAGES = {
  geth: "ethereum/client-go:v1.17.5",
  lighthouse: "sigp/lighthouse:v8.2.0",
  // Takes l2.pendingPollInterval as --preconfirmed-poll-interval (see config/releases.ts).
  juno: "nethermind/juno:v0.17.0",
  // Pathfinder publishes to swmansion/pathfinder since v0.24.1 (eqlabs/ is a temporary mirror).
  pathfinder: "swmansion/pathfinder:v0.24.1",
  // The guide's indexer is a shell script polling the L2 node; the package ships one and runs it here.
  indexer: "node:24.19.0-alpine3.24",
} as const;

export const INDEXER_COMMAND = ["/indexer/indexer.sh"] as const;

/** The gateway and its ACME client. The tests, the bench and the end-to-end image run this HAProxy release (scripts/haproxy/build.sh). */
export const GATEWAY_IMAGES = {
  haproxy: "haproxy:3.2.26",
  certbot: "certbot/certbot:v5.6.0",
} as const;

/**
 * Where the gateway replicas of a cluster count quotas together (host kind kubernetes): Valkey's
 * official image (BSD-licensed, Redis's protocol). Not run on the machines that test the package:
 * tests run Debian's redis-server, which speaks the same commands.
 */
export const COUNTER_STORE_IMAGE = "valkey/valkey:9.0.8";

/**
 * Monitoring (rpcstack:monitoring): Prometheus 3.5, its long-term-support line. Not pulled on the
 * machines that test the package (no image registry there): their images run this release built
 * from its Go module (scripts/clients/build.sh).
 */
export const MONITORING_IMAGES = {
  prometheus: "prom/prometheus:v3.5.0",
} as const;

/**
 * A plain Node.js image (the indexer's pin): it runs the bundled readiness program (sync checks
 * and the live health endpoint), which needs nothing but Node.
 */
export const NODE_RUNTIME_IMAGE = IMAGES.indexer;

/**
 * The devnet network's L2: Starknet Devnet (github.com/0xSpaceShard/starknet-devnet, published as
 * docker.io/shardlabs/starknet-devnet-rs:<crates.io version>; release v0.8.1 of 23 Apr 2026).
 * Its image is Alpine with tini and BusyBox, entrypoint `tini -- starknet-devnet --host 0.0.0.0`.
 * The L1 of devnet is the geth pin above, run with --dev.
 */
export const DEVNET_IMAGES = {
  starknetDevnet: "shardlabs/starknet-devnet-rs:0.8.1",
} as const;
