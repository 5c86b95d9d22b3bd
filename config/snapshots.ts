/**
 * The L2 database snapshots each client's maintainers publish, per network, with where each fact
 * comes from; and how `l2.snapshot` resolves against them. Pure data and functions.
 *
 * Nothing here was fetched from the snapshot servers (unreachable where this was written): the
 * URLs, formats and sizes are read from the clients' documentation, as each entry says.
 */
import type { L2ClientName, NetworkName } from "./networks/index.js";
import { RESOURCES, type SizedClient } from "./resources.js";

/**
 * How an archive becomes the node's database:
 *  - `tar.zst`: a zstd-compressed tar of the database folder, unpacked into the volume's root
 *    (Juno: the docs extract into a folder that is then mounted as `--db-path`);
 *  - `zst`: one zstd-compressed file, written under `file` in the volume (Pathfinder's SQLite database).
 */
export type SnapshotFormat = { readonly kind: "tar.zst" } | { readonly kind: "zst"; readonly file: string };

export interface PublishedSnapshot {
  /** Redirects to the newest snapshot. */
  readonly url: string;
  readonly format: SnapshotFormat;
  /** How often the publisher makes a new one: how much sync is left after a restore. */
  readonly everyDays: number;
  /** The archive's size as last read in the publisher's docs (bytes, date), when they state one. */
  readonly archiveBytes?: { readonly bytes: number; readonly date: string };
  readonly source: string;
}

const GIB = 1024 ** 3;
const JUNO_DOCS = "NethermindEth/juno docs/docs/snapshots.md";
const PATHFINDER_DOCS = "software-mansion/pathfinder docs/docs/database-snapshots.md";

/** Juno's weekly .tar.zst of one network, `name` in its URL; the docs print Content-Length / 1024^3 and call it GB: GiB. */
const juno = (name: string, gib: number): PublishedSnapshot => ({
  url: `https://juno-snapshots.nethermind.io/files/${name}/latest`,
  format: { kind: "tar.zst" },
  everyDays: 7,
  archiveBytes: { bytes: Math.round(gib * GIB), date: "2025-08-26" },
  source: `${JUNO_DOCS}: weekly, .tar.zst, streamable into the database folder`,
});

/** Pathfinder's weekly zstd-compressed SQLite file for one network (its name is the file's). */
const pathfinder = (name: string): PublishedSnapshot => ({
  url: `https://rpc.pathfinder.swmansion.com/snapshots/latest/${name}`,
  format: { kind: "zst", file: `${name}.sqlite` },
  everyDays: 7,
  source: `${PATHFINDER_DOCS}: weekly, one zstd-compressed SQLite file (not a tar); SHA-256 and sizes on the download page`,
});

/** Per client and public network; a missing entry means no published snapshot. */
export const PUBLISHED_SNAPSHOTS: Readonly<Partial<Record<L2ClientName, Readonly<Partial<Record<NetworkName, PublishedSnapshot>>>>>> = {
  juno: { mainnet: juno("mainnet", 195.13), testnet: juno("sepolia", 32.84) },
  pathfinder: { mainnet: pathfinder("mainnet"), testnet: pathfinder("testnet-sepolia") },
};

/** Where Pathfinder keeps its database per PATHFINDER_NETWORK (crates/pathfinder/src/bin/pathfinder/main.rs). */
const PATHFINDER_FILES: Readonly<Partial<Record<NetworkName, string>>> = { mainnet: "mainnet.sqlite", testnet: "testnet-sepolia.sqlite" };

/** `l2.snapshot` resolved: what the restore service is told. */
export interface SnapshotSettings {
  /** An https URL: the publisher's for `latest`, or the operator's. */
  readonly url: string;
  /** "latest" or "url": how the operator named it, for messages. */
  readonly from: "latest" | "url";
  readonly format: SnapshotFormat;
  readonly sha256?: string;
  /** The archive's expected size: a download of another length fails. */
  readonly sizeBytes?: number;
  /** What the restored database takes on disk: the operator's `unpackedGB`, else the resource table's. */
  readonly unpackedGB: number;
  readonly unpackedFrom: "l2.snapshot.unpackedGB" | "resource table";
}

export interface RawSnapshot {
  readonly url: string;
  readonly sha256?: string;
  readonly sizeBytes?: number;
  readonly unpackedGB?: number;
}

/** Why a client cannot restore a snapshot on a network (and which key to name), or undefined when it can. */
export function snapshotRefusal(client: L2ClientName, network: NetworkName, url: string): { readonly key: string[]; readonly why: string } | undefined {
  if (network === "devnet" || client === "starknet-devnet") {
    return { key: ["l2", "snapshot"], why: "does not apply to network devnet: Starknet Devnet keeps its chain in memory and starts a new one each time, so there is nothing to restore" };
  }
  if (url === "latest" && !PUBLISHED_SNAPSHOTS[client]?.[network]) {
    return { key: ["l2", "snapshot", "url"], why: `"latest": ${client} publishes no snapshot for network ${network}; give an https:// URL of one, or remove rpcstack:l2.snapshot to sync from genesis` };
  }
  return undefined;
}

/** The format a client's database arrives in, whatever the URL. */
export function snapshotFormat(client: SizedClient, network: "mainnet" | "testnet"): SnapshotFormat {
  if (client === "pathfinder") return { kind: "zst", file: PATHFINDER_FILES[network]! };
  return { kind: "tar.zst" };
}

/** Resolves a snapshot the rules accepted (snapshotRefusal found nothing). */
export function resolveSnapshot(raw: RawSnapshot, client: "juno" | "pathfinder", network: "mainnet" | "testnet"): SnapshotSettings {
  const published = PUBLISHED_SNAPSHOTS[client]?.[network];
  const latest = raw.url === "latest";
  if (latest && !published) throw new Error(`rpcstack:l2.snapshot.url: ${client} publishes no snapshot for ${network}`);
  const table = RESOURCES[network][client].diskGB;
  return {
    url: latest ? published!.url : raw.url,
    from: latest ? "latest" : "url",
    format: snapshotFormat(client, network),
    ...(raw.sha256 ? { sha256: raw.sha256 } : {}),
    ...(raw.sizeBytes ? { sizeBytes: raw.sizeBytes } : {}),
    unpackedGB: raw.unpackedGB ?? (typeof table === "number" ? table : table.all),
    unpackedFrom: raw.unpackedGB === undefined ? "resource table" : "l2.snapshot.unpackedGB",
  };
}
