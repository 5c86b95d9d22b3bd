/**
 * Image pins shared by both networks. Bump them here, together with the flags that depend on the
 * version (see config/versions.ts), never to a moving tag.
 */
export const IMAGES = {
  geth: "ethereum/client-go:v1.17.3",
  lighthouse: "sigp/lighthouse:v8.0.0",
  // Takes l2.pendingPollInterval as --preconfirmed-poll-interval (see config/releases.ts).
  juno: "nethermind/juno:v0.17.0",
  // Pathfinder publishes to swmansion/pathfinder since v0.24.1 (eqlabs/ is a temporary mirror).
  pathfinder: "swmansion/pathfinder:v0.24.1",
  // The guide's indexer is a shell script polling the L2 node; the package ships one and runs it here.
  indexer: "node:22.12.0-alpine3.21",
} as const;

export const INDEXER_COMMAND = ["/indexer/indexer.sh"] as const;

/** The gateway and its ACME client. The config is kept valid for this HAProxy and Debian's 2.6. */
export const GATEWAY_IMAGES = {
  haproxy: "haproxy:3.2.6",
  certbot: "certbot/certbot:v4.0.0",
} as const;

/** Runs the bundled readiness program (sync checks and the live health endpoint). */
export const READINESS_IMAGE = IMAGES.indexer;

/**
 * The devnet network's L2: Starknet Devnet (github.com/0xSpaceShard/starknet-devnet, published as
 * docker.io/shardlabs/starknet-devnet-rs:<crates.io version>; release v0.8.1 of 23 Apr 2026).
 * Its image is Alpine with tini and BusyBox, entrypoint `tini -- starknet-devnet --host 0.0.0.0`.
 * The L1 of devnet is the geth pin above, run with --dev.
 */
export const DEVNET_IMAGES = {
  starknetDevnet: "shardlabs/starknet-devnet-rs:0.8.1",
} as const;
