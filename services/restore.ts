/** The L2 node's restore-from-snapshot init service (restore/restoreMain.ts), run before the node. Pure data. */
import type { SnapshotSettings } from "../config/snapshots.js";
import type { FileSpec, ServiceSpec } from "./types.js";

const PROGRAM = { from: "bundle", path: "/restore/restore.js", source: "restore/restoreMain.ts" } as const satisfies FileSpec;
/** Where the restore mounts the node's volume (the node may mount it elsewhere). */
const DEST = "/data";

export const RESTORE_SERVICE = { name: "l2-restore", containerName: "rpcstack-l2-restore" } as const;

/**
 * Undefined without a snapshot (rpcstack:l2.snapshot). It runs every time before the node starts
 * and leaves a volume that holds a database as it is, so only an empty volume is restored into.
 * `image`: Node.js with its own zstd (22.15 and later).
 */
export function l2Restore(s: SnapshotSettings | undefined, image: string, node: ServiceSpec): ServiceSpec | undefined {
  if (!s) return undefined;
  const data = node.volumes[0];
  if (!data) throw new Error(`rpcstack:l2.snapshot: ${node.name} keeps no data volume to restore into`);
  const format = s.format.kind === "zst" ? `zst:${s.format.file}` : "tar.zst";
  return {
    ...RESTORE_SERVICE,
    image,
    command: [
      "node", PROGRAM.path, "--url", s.url, "--dest", DEST, "--format", format,
      "--need-bytes", String(s.unpackedGB * 1e9),
      ...(s.sha256 ? ["--sha256", s.sha256] : []),
      ...(s.sizeBytes ? ["--size-bytes", String(s.sizeBytes)] : []),
      // The restored files belong to the node's user (Pathfinder runs as 1000).
      ...(node.user ? ["--owner", node.user] : []),
    ],
    environment: {},
    ports: [],
    volumes: [{ volume: data.volume, path: DEST }],
    files: [PROGRAM],
    restart: "no",
    // Root, to write a fresh volume (Docker creates it root-owned) and hand it to the node's user.
    user: "0:0",
    // On SIGTERM it stops; the staging folder it leaves is removed by the next run.
    stopGraceSeconds: 30,
    dependsOn: [],
  };
}
