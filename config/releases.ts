/**
 * Which client releases the package can deploy, and the flags that follow the release. Each
 * floor and flag change names the upstream source it was read from. Pure.
 */
import { compareVersions, formatVersion, imageVersion, parseVersion, type Version } from "./versions.js";

export type ClientName = "geth" | "lighthouse" | "juno" | "pathfinder" | "starknet-devnet";

export const CLIENT_LABELS: Readonly<Record<ClientName, string>> = {
  geth: "geth",
  lighthouse: "Lighthouse",
  juno: "Juno",
  pathfinder: "Pathfinder",
  "starknet-devnet": "Starknet Devnet",
};

export interface ReleaseFloor {
  /** The oldest release that can follow the live network. */
  readonly minimum: Version;
  /** Why older releases are refused: what they cannot follow. */
  readonly why: string;
  /** Where the floor comes from (repository, file or release). */
  readonly source: string;
}

/** Releases before these cannot follow mainnet and Sepolia as they run on 2026-11-23 (Starknet Devnet: see its entry). */
export const RELEASE_FLOORS: Readonly<Record<ClientName, ReleaseFloor>> = {
  geth: {
    minimum: [1, 16, 6],
    why: "older releases do not schedule the Osaka (Fusaka) fork, live on mainnet since 3 Dec 2025",
    source: "ethereum/go-ethereum params/config.go: v1.16.6 is the first tag with mainnet OsakaTime 1764798551",
  },
  lighthouse: {
    minimum: [8, 0, 0],
    why: "older releases do not schedule the Fulu (Fusaka) fork, live on mainnet since epoch 411392 (3 Dec 2025)",
    source: "sigp/lighthouse release v8.0.0 notes (the Fusaka mainnet release)",
  },
  juno: {
    minimum: [0, 16, 6],
    why: "older releases cannot follow Starknet 0.14.4, live on mainnet and Sepolia",
    source: "NethermindEth/juno release v0.16.6 notes (Starknet 0.14.4 support)",
  },
  pathfinder: {
    minimum: [0, 24, 0],
    why: "older releases cannot follow Starknet 0.14.4, live on mainnet and Sepolia",
    source: 'eqlabs/pathfinder CHANGELOG.md, v0.24.0: "as required by Starknet 0.14.4"',
  },
  // Follows no network; its floor is what the devnet stack relies on: periodic blocks
  // (--block-generation-on <seconds>, since v0.1.2) and a WebSocket endpoint for the gateway.
  "starknet-devnet": {
    minimum: [0, 3, 0],
    why: "older releases have no WebSocket endpoint (/ws), which the gateway's wss:// path relays to",
    source: "0xSpaceShard/starknet-devnet crates/starknet-devnet-server/src/server.rs: the /ws route first appears at v0.3.0",
  },
};

/** A flag that a range of releases accepts: from `from` up to, not including, `until`. */
export interface FlagEra {
  readonly from: Version;
  readonly until?: Version;
  readonly flag: string;
  readonly source: string;
}

/**
 * How Juno takes `l2.pendingPollInterval` (the refresh of the not-yet-final block). Juno turned
 * pending polling into a flag in v0.7.0; Starknet 0.14 replaced the pending block with the
 * pre-confirmed one, and v0.16.0 removed --pending-poll-interval in favour of
 * --preconfirmed-poll-interval (added in v0.15.0; Juno's own default 500 ms in v0.16.x, 1 s in its current docs).
 */
export const JUNO_POLL_FLAGS: readonly FlagEra[] = [
  { from: [0, 7, 0], until: [0, 16, 0], flag: "--pending-poll-interval", source: "NethermindEth/juno cmd/juno/juno.go at v0.7.0 .. v0.15.x" },
  { from: [0, 16, 0], flag: "--preconfirmed-poll-interval", source: "NethermindEth/juno release v0.16.0 notes; cmd/juno/juno.go at v0.16.0 and later" },
];

export type ReleaseResult = { readonly version: Version } | { readonly error: string };

/**
 * The release an image runs: the explicit version (for digest pins and custom tags) or the
 * version in the tag; refused when it cannot be told, when both disagree, or below the floor.
 */
export function clientRelease(client: ClientName, image: string, explicit: string | undefined, versionKey: string): ReleaseResult {
  const label = CLIENT_LABELS[client];
  const fromTag = imageVersion(image);
  let version: Version | undefined = fromTag;
  if (explicit !== undefined) {
    const v = parseVersion(explicit);
    if (!v) return { error: `rpcstack:${versionKey} "${explicit}" is not a release like v1.2.3` };
    if (fromTag && compareVersions(fromTag, v) !== 0) {
      return { error: `the tag of "${image}" says ${formatVersion(fromTag)} but rpcstack:${versionKey} says ${formatVersion(v)}; drop one or make them agree` };
    }
    version = v;
  }
  if (!version) {
    return { error: `cannot tell which ${label} release "${image}" runs; pin a version tag, or set rpcstack:${versionKey} (e.g. for an image pinned by digest)` };
  }
  const floor = RELEASE_FLOORS[client];
  if (compareVersions(version, floor.minimum) < 0) {
    return {
      error: `${label} ${formatVersion(version)} is too old: ${floor.why}; the minimum is ${formatVersion(floor.minimum)} (${floor.source})`,
    };
  }
  return { version };
}

/** The Juno flag that carries the poll interval for a release, or why none does. */
export function junoPollFlag(version: Version): { readonly flag: string } | { readonly error: string } {
  const era = JUNO_POLL_FLAGS.find((e) => compareVersions(version, e.from) >= 0 && (!e.until || compareVersions(version, e.until) < 0));
  if (era) return { flag: era.flag };
  return { error: `Juno ${formatVersion(version)} takes no poll-interval flag in any form (pending polling became a flag in ${formatVersion(JUNO_POLL_FLAGS[0].from)})` };
}

/** The one line `pulumi up` prints about the poll flag it chose. */
export function describeJunoPoll(release: string, flag: string, value: string): string {
  const renamed = flag === "--preconfirmed-poll-interval" ? " (Juno dropped --pending-poll-interval in v0.16.0)" : "";
  return `Juno ${release}: rpcstack:l2.pendingPollInterval ${value} passed as ${flag}${renamed}`;
}

/** The L2 clients, whose nodes serve several Starknet JSON-RPC spec versions side by side. */
export type L2Client = "juno" | "pathfinder" | "starknet-devnet";

/** Where a node serves one spec version: the path on its HTTP port and on its WebSocket endpoint. */
export interface SpecPaths {
  readonly http: string;
  readonly ws: string;
}

/** The spec versions (`v0_9`, named as the nodes' own paths name them) a range of releases serves. */
export interface SpecEra {
  readonly from: Version;
  readonly until?: Version;
  readonly versions: Readonly<Record<string, SpecPaths>>;
  readonly source: string;
}

const at = (paths: (v: string) => SpecPaths, ...versions: string[]) => Object.fromEntries(versions.map((v) => [v, paths(v)]));

/**
 * What each L2 client release serves. Juno serves HTTP on its HTTP port and WebSocket on its WS
 * port under the same paths (its newest version also at `/`); Pathfinder serves both on one port,
 * WebSocket under `/ws`; Starknet Devnet serves one version, at `/rpc` and `/ws`.
 */
export const SPEC_VERSIONS: Readonly<Record<L2Client, readonly SpecEra[]>> = {
  juno: [
    {
      from: [0, 16, 6],
      versions: at((v) => ({ http: `/${v}`, ws: `/${v}` }), "v0_8", "v0_9", "v0_10"),
      source: "NethermindEth/juno node/rpc.go (makeRPCServers) at 0d14e91de3ce9519e635eca601122cc5b8d90de2; read for v0.17.0, assumed for v0.16.6 .. v0.16.x",
    },
  ],
  pathfinder: [
    {
      from: [0, 24, 0],
      versions: at((v) => ({ http: `/rpc/${v}`, ws: `/ws/rpc/${v}` }), "v0_6", "v0_7", "v0_8", "v0_9", "v0_10"),
      source: "eqlabs/pathfinder crates/rpc/src/lib.rs (RpcServer::spawn routes) at afd4b22ed95f07fae70b9a8d88eb2122babc9338 (after v0.22.3); assumed for v0.24.x",
    },
  ],
  "starknet-devnet": [
    {
      from: [0, 6, 0],
      until: [0, 7, 0],
      versions: at(() => ({ http: "/rpc", ws: "/ws" }), "v0_9"),
      source: "0xSpaceShard/starknet-devnet crates/starknet-devnet-server/src/api/mod.rs RPC_SPEC_VERSION 0.9.0 and server.rs at v0.6.0 (b4460c7b5d0679632d471bf72b9713805d38c0f0)",
    },
    {
      from: [0, 7, 0],
      versions: at(() => ({ http: "/rpc", ws: "/ws" }), "v0_10"),
      source: "0xSpaceShard/starknet-devnet crates/starknet-devnet-server/src/api/mod.rs RPC_SPEC_VERSION 0.10.x and server.rs at v0.7.0 .. v0.8.1 (2bb7ffb37d6a036dc2712196138eae4fe0519d11)",
    },
  ],
};

/** The spec versions a release serves with their paths, or why that is not known. */
export function specVersionsOf(client: L2Client, version: Version): { readonly versions: Readonly<Record<string, SpecPaths>> } | { readonly error: string } {
  const era = SPEC_VERSIONS[client].find((e) => compareVersions(version, e.from) >= 0 && (!e.until || compareVersions(version, e.until) < 0));
  if (era) return { versions: era.versions };
  return { error: `which JSON-RPC spec versions ${CLIENT_LABELS[client]} ${formatVersion(version)} serves is not recorded (config/releases.ts knows ${SPEC_VERSIONS[client].map((e) => `${formatVersion(e.from)}${e.until ? ` .. before ${formatVersion(e.until)}` : " and later"}`).join(", ")})` };
}

/** The spec version the unversioned gateway path serves unless `l2.rpcVersion` says otherwise: every pinned L2 release serves it. */
export const DEFAULT_RPC_VERSION = "v0_10";

/** Why a release cannot serve `wanted` as the stack's pinned version, or undefined when it can. */
export function rpcVersionRefusal(client: L2Client, version: Version, wanted: string, nodes: readonly string[]): string | undefined {
  const served = specVersionsOf(client, version);
  if ("error" in served) return served.error;
  if (Object.hasOwn(served.versions, wanted)) return undefined;
  return `${wanted} is not served by ${nodes.join(", ")} (${CLIENT_LABELS[client]} ${formatVersion(version)}, which serves ${Object.keys(served.versions).join(", ")})`;
}
