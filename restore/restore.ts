/**
 * Restores an L2 node's database from a snapshot archive into its (empty) volume, streaming:
 * download -> SHA-256 -> zstd -> tar (or one file), so it never needs the archive's size on disk
 * beside the database. Rules:
 *  - a volume that holds anything but this program's staging folder (and ext4's lost+found) is a
 *    database: it is never touched;
 *  - everything is written under STAGE_DIR first and moved into place only after the archive
 *    ended, its zstd frames and tar end marker were read, and its size and checksum matched, so a
 *    node never starts on a half-restored folder; a staging folder found at start is an
 *    interrupted restore and is removed;
 *  - a dropped connection resumes with a Range request where the server answers 206 for it, and
 *    starts over (staging emptied) where it does not;
 *  - any failure empties the volume again (it was empty before) and names its cause.
 * This module runs those steps; download.ts, unpack.ts, volume.ts and progress.ts do them.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { ArchiveDownload, Restart, type DownloadOptions } from "./download.js";
import { causeOf, RestoreFailure } from "./failure.js";
import { ProgressReporter } from "./progress.js";
import { STAGE_DIR, formatBytes, formatDuration, formatSource, type RestoreResult } from "../volumes/restoreStatus.js";
import { DecompressedBytes, unpacker, zstdDecompressor, type ArchiveFormat } from "./unpack.js";
import { checkFits, emptyVolume, isVerified, markVerified, moveIntoPlace, stagedDatabase, volumeEntries, type Owner } from "./volume.js";

export interface RestoreOptions extends DownloadOptions {
  readonly format: ArchiveFormat;
  /** The volume's root, where the node finds its database. */
  readonly dest: string;
  /** Free space the unpacked database needs: a volume with less is refused before any download. */
  readonly needBytes: number;
  readonly sha256?: string;
  /** uid:gid the restored files are given (the node's user). */
  readonly owner?: Owner;
  readonly progressMs: number;
}

export async function restore(o: RestoreOptions): Promise<RestoreResult> {
  const stage = join(o.dest, STAGE_DIR);
  const entries = await volumeEntries(o.dest);
  if (entries.length && !entries.includes(STAGE_DIR)) {
    o.log(`rpcstack-restore: ${o.dest} holds a database (${entries.length} entr${entries.length === 1 ? "y" : "ies"}): left as it is, no snapshot restored`);
    return { outcome: "kept", entries: entries.length };
  }
  if (entries.includes(STAGE_DIR)) {
    if (await isVerified(stage)) {
      // Verified, then stopped while moving into place: finish the move.
      o.log("rpcstack-restore: a verified restore was interrupted while moving into place; finishing it");
      await moveIntoPlace(o.dest, stage, o.owner);
      return { outcome: "restored", bytes: 0, unpackedBytes: 0, seconds: 0, resumes: 0, restarts: 0 };
    }
    o.log("rpcstack-restore: found an interrupted restore (never verified); removing it and starting again");
    await emptyVolume(o.dest);
  }
  try {
    return await restoreInto(o, stage);
  } catch (e) {
    await emptyVolume(o.dest);
    return { outcome: "failed", cause: causeOf(e) };
  }
}

async function restoreInto(o: RestoreOptions, stage: string): Promise<RestoreResult> {
  await checkFits(o.dest, o.needBytes);
  const started = Date.now();
  let restarts = 0;
  const counters = { resumes: 0 };
  for (;;) {
    await mkdir(stagedDatabase(stage), { recursive: true });
    try {
      const got = await attempt(o, stage, started, counters);
      await markVerified(stage);
      await moveIntoPlace(o.dest, stage, o.owner);
      const seconds = (Date.now() - started) / 1000;
      o.log(
        `rpcstack-restore: restored ${formatBytes(got.bytes)} from ${formatSource(o.url)} (${formatBytes(got.unpackedBytes)} written) in ${formatDuration(seconds)}, ` +
          `${formatBytes(got.bytes / Math.max(seconds, 0.001))}/s; ${counters.resumes} resumed, ${restarts} restarted`,
      );
      return { outcome: "restored", ...got, seconds, resumes: counters.resumes, restarts };
    } catch (e) {
      if (!(e instanceof Restart)) throw e;
      restarts++;
      if (counters.resumes + restarts > o.retries) throw new RestoreFailure(`${e.message}, and ${o.retries} retries are spent`);
      o.log(`rpcstack-restore: ${e.message}; starting again from the first byte (restart ${restarts})`);
      await rm(stage, { recursive: true, force: true });
    }
  }
}

interface Got {
  readonly bytes: number;
  readonly unpackedBytes: number;
}

/** One pass from the first byte into the stage, verified: resumes within it, throws Restart where it cannot. */
async function attempt(o: RestoreOptions, stage: string, started: number, counters: { resumes: number }): Promise<Got> {
  const download = new ArchiveDownload(o, counters);
  const decompressed = new DecompressedBytes();
  // Before the progress timer starts: a Node.js without zstd fails here, leaving no timer behind.
  const zstd = zstdDecompressor();
  const progress = new ProgressReporter(o, started, () => ({ done: download.done, total: download.total, unpacked: decompressed.count }));
  await progress.start();
  try {
    await pipeline(Readable.from(download.chunks()), zstd, decompressed, unpacker(o.format, stagedDatabase(stage), o.log));
  } finally {
    await progress.stop();
  }
  const { done, total } = download;
  if (total !== undefined && done !== total) throw new RestoreFailure(`truncated: received ${done} of ${total} bytes`);
  if (o.format.kind === "tar.zst" && !decompressed.endsWithTarMarker()) {
    throw new RestoreFailure("truncated: the tar archive has no end-of-archive marker (it was cut short at a file boundary)");
  }
  if (o.sha256) {
    const got = download.hash.digest("hex");
    if (got !== o.sha256) throw new RestoreFailure(`corrupt: the archive's SHA-256 is ${got}, rpcstack:l2.snapshot.sha256 says ${o.sha256}`);
  }
  await progress.report();
  return { bytes: done, unpackedBytes: decompressed.count };
}
