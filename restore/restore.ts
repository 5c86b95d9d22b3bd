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
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { chown, mkdir, readdir, readFile, rename, rm, statfs, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable, Transform, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as zlib from "node:zlib";
import { x as untar } from "tar";
import { STAGE_DIR, STATUS_FILE, describeProgress, formatBytes, formatDuration, type RestoreProgress, type RestoreResult } from "./status.js";

export type ArchiveFormat = { readonly kind: "tar.zst" } | { readonly kind: "zst"; readonly file: string };

export interface RestoreOptions {
  readonly url: string;
  readonly format: ArchiveFormat;
  /** The volume's root, where the node finds its database. */
  readonly dest: string;
  /** Free space the unpacked database needs: a volume with less is refused before any download. */
  readonly needBytes: number;
  readonly sha256?: string;
  readonly sizeBytes?: number;
  /** uid:gid the restored files are given (the node's user). */
  readonly owner?: { readonly uid: number; readonly gid: number };
  /** Resumes (or restarts) after a dropped connection, in all. */
  readonly retries: number;
  /** A download that sends nothing for this long counts as dropped. */
  readonly stallMs: number;
  readonly progressMs: number;
  readonly log: (line: string) => void;
}

/** A failure with its cause in words: what the operator reads. */
export class RestoreFailure extends Error {}
/** The server could not be reached: fatal for the first request, a dropped line to resume after later. */
class Unreachable extends RestoreFailure {}

/** ext4 makes it at the root of every file system: not a database. */
const IGNORED = new Set(["lost+found"]);
const COMPLETE_MARK = "complete";
const TAR_END = 1024;

const shown = (url: string) => {
  const u = new URL(url);
  return `${u.host}${u.pathname}`;
};

class Restart extends Error {}

export async function restore(o: RestoreOptions): Promise<RestoreResult> {
  const stage = join(o.dest, STAGE_DIR);
  const entries = (await readdir(o.dest)).filter((e) => !IGNORED.has(e));
  if (entries.length && !entries.includes(STAGE_DIR)) {
    o.log(`rpcstack-restore: ${o.dest} holds a database (${entries.length} entr${entries.length === 1 ? "y" : "ies"}): left as it is, no snapshot restored`);
    return { outcome: "kept", entries: entries.length };
  }
  if (entries.includes(STAGE_DIR)) {
    if (await readFile(join(stage, COMPLETE_MARK), "utf8").then(() => true, () => false)) {
      // Verified, then stopped while moving into place: finish the move.
      o.log("rpcstack-restore: a verified restore was interrupted while moving into place; finishing it");
      await moveIntoPlace(o, stage);
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
  const fs = await statfs(o.dest);
  const free = fs.bavail * fs.bsize;
  if (free < o.needBytes) {
    throw new RestoreFailure(`does not fit: the restored database needs ${formatBytes(o.needBytes)} and the volume has ${formatBytes(free)} free; refused before downloading anything`);
  }
  const started = Date.now();
  let restarts = 0;
  const counters = { resumes: 0 };
  for (;;) {
    await mkdir(join(stage, "db"), { recursive: true });
    try {
      const got = await attempt(o, stage, started, counters);
      await writeFile(join(stage, COMPLETE_MARK), new Date().toISOString());
      await moveIntoPlace(o, stage);
      const seconds = (Date.now() - started) / 1000;
      o.log(
        `rpcstack-restore: restored ${formatBytes(got.bytes)} from ${shown(o.url)} (${formatBytes(got.unpackedBytes)} written) in ${formatDuration(seconds)}, ` +
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

/** One pass from the first byte: resumes within it, throws Restart where it cannot. */
async function attempt(o: RestoreOptions, stage: string, started: number, counters: { resumes: number }): Promise<Got> {
  const hash = createHash("sha256");
  let done = 0;
  let total: number | undefined;
  let unpacked = 0;
  let tail = Buffer.alloc(0);
  let last = { at: Date.now(), done: 0, rate: 0 };

  const progress = (): RestoreProgress => {
    const now = Date.now();
    const dt = (now - last.at) / 1000;
    const rate = dt > 0 ? (last.rate ? 0.5 * last.rate + 0.5 * ((done - last.done) / dt) : (done - last.done) / dt) : last.rate;
    last = { at: now, done, rate };
    return {
      source: shown(o.url),
      doneBytes: done,
      ...(total !== undefined ? { totalBytes: total } : {}),
      unpackedBytes: unpacked,
      bytesPerSecond: Math.round(rate),
      ...(total !== undefined && rate > 0 ? { etaSeconds: Math.round((total - done) / rate) } : {}),
      startedAt: new Date(started).toISOString(),
      updatedAt: new Date(now).toISOString(),
    };
  };
  const report = async () => {
    const p = progress();
    o.log(`rpcstack-restore: ${describeProgress(p)}`);
    await writeFile(join(stage, `${STATUS_FILE}.tmp`), JSON.stringify(p));
    await rename(join(stage, `${STATUS_FILE}.tmp`), join(stage, STATUS_FILE));
  };
  await report();
  const timer = setInterval(() => void report().catch(() => undefined), o.progressMs);

  async function* download(): AsyncGenerator<Buffer> {
    let validator: string | undefined;
    // After the first answer: the file `latest` redirected to, so a resume cannot land on next week's snapshot.
    let url = o.url;
    for (;;) {
      // A connection that stays open without sending is as lost as one that broke.
      const stalled = new AbortController();
      let watchdog = setTimeout(() => stalled.abort(), o.stallMs);
      let lost: string | undefined;
      try {
        const res = await get(url, done, validator, stalled.signal);
        if (done === 0) {
          url = res.url || o.url;
          total = lengthOf(res);
          validator = res.headers.get("etag") ?? res.headers.get("last-modified") ?? undefined;
          if (o.sizeBytes !== undefined && total !== undefined && total !== o.sizeBytes) {
            throw new RestoreFailure(`the server offers ${total} bytes but rpcstack:l2.snapshot.sizeBytes says ${o.sizeBytes}: not the expected archive`);
          }
          total ??= o.sizeBytes;
        }
        for await (const chunk of Readable.fromWeb(res.body as any) as AsyncIterable<Buffer>) {
          clearTimeout(watchdog);
          watchdog = setTimeout(() => stalled.abort(), o.stallMs);
          hash.update(chunk);
          done += chunk.length;
          yield chunk;
        }
      } catch (e) {
        // Unreachable on the first request is a failure; later, a dropped line to resume after.
        if (e instanceof Restart || (e instanceof RestoreFailure && !(e instanceof Unreachable && done > 0))) throw e;
        lost = stalled.signal.aborted ? `the download stalled (no data for ${o.stallMs / 1000} s) after ${formatBytes(done)}` : `the connection broke after ${formatBytes(done)} (${(e as Error).message})`;
      } finally {
        clearTimeout(watchdog);
      }
      if (lost === undefined && (total === undefined || done >= total)) return;
      lost ??= `the server ended the download after ${formatBytes(done)} of ${formatBytes(total!)}`;
      counters.resumes++;
      if (counters.resumes > o.retries) throw new RestoreFailure(`truncated: ${lost}, and ${o.retries} retries are spent`);
      const wait = Math.min(30_000, 1000 * 2 ** (counters.resumes - 1));
      o.log(`rpcstack-restore: ${lost}; resuming at byte ${done} in ${wait / 1000} s (retry ${counters.resumes} of ${o.retries})`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  const zstd = zstdDecompressor();
  const watch = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      unpacked += chunk.length;
      tail = Buffer.concat([tail, chunk]).subarray(-TAR_END);
      cb(null, chunk);
    },
  });
  try {
    await pipeline(Readable.from(download()), zstd, watch, sink(o, stage));
  } finally {
    clearInterval(timer);
  }
  if (total !== undefined && done !== total) throw new RestoreFailure(`truncated: received ${done} of ${total} bytes`);
  if (o.format.kind === "tar.zst" && (tail.length < TAR_END || tail.some((b) => b !== 0))) {
    throw new RestoreFailure("truncated: the tar archive has no end-of-archive marker (it was cut short at a file boundary)");
  }
  if (o.sha256) {
    const got = hash.digest("hex");
    if (got !== o.sha256) throw new RestoreFailure(`corrupt: the archive's SHA-256 is ${got}, rpcstack:l2.snapshot.sha256 says ${o.sha256}`);
  }
  await report();
  return { bytes: done, unpackedBytes: unpacked };
}

/** Where the decompressed bytes go: unpacked into stage/db, or one file there. */
function sink(o: RestoreOptions, stage: string): Writable {
  const dir = join(stage, "db");
  if (o.format.kind === "zst") return createWriteStream(join(dir, o.format.file));
  let failed: Error | undefined;
  // A write waiting for 'drain' when the unpacker gives up is released with the failure.
  let waiting: ((e?: Error) => void) | undefined;
  // Every warning fails the restore (a damaged archive, a write error such as ENOSPC), except
  // node-tar's notes (TAR_ENTRY_INFO: e.g. a leading "/" stripped from a link target), which are logged.
  // The archive's owners mean nothing here (the node's user is set afterwards); paths stay inside dir.
  const unpack = untar({
    cwd: dir,
    strict: false,
    preserveOwner: false,
    onwarn: (code: string, message: string | Error, data?: unknown) => {
      if (code === "TAR_ENTRY_INFO") return o.log(`rpcstack-restore: note: ${message instanceof Error ? message.message : message}`);
      if (failed) return;
      const cause = (data as { error?: Error })?.error ?? (data instanceof Error ? data : message instanceof Error ? message : undefined);
      failed = cause ?? Object.assign(new Error(`${code}: ${String(message)}`), { tarCode: code });
      if (!(failed as Error & { tarCode?: string }).tarCode && !(failed as NodeJS.ErrnoException).code) Object.assign(failed, { tarCode: code });
      unpack.abort(failed);
      waiting?.(failed);
    },
  });
  const closed = new Promise<void>((resolve, reject) => {
    unpack.on("close", () => (failed ? reject(failed) : resolve()));
    unpack.on("error", (e: Error) => reject((failed ??= e)));
  });
  closed.catch(() => undefined);
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (failed) return cb(failed);
      if (unpack.write(chunk)) return cb();
      waiting = cb;
      unpack.once("drain", () => {
        waiting = undefined;
        cb(failed);
      });
    },
    final(cb) {
      unpack.end();
      closed.then(() => cb(), cb);
    },
  });
}

/** Node's own zstd (22.15 / 23.8 and later; the pinned Node image is 24). */
function zstdDecompressor(): Transform {
  const make = (zlib as unknown as { createZstdDecompress?: (o: { chunkSize: number }) => Transform }).createZstdDecompress;
  if (!make) throw new RestoreFailure(`this Node.js (${process.version}) cannot decompress zstd; run the restore with Node.js 22.15 or later`);
  // 1 MiB output chunks (zlib's default is 16 KiB): fewer, larger writes through tar to the disk.
  return make({ chunkSize: 1 << 20 });
}

async function get(url: string, from: number, validator: string | undefined, signal: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = from ? { Range: `bytes=${from}-`, ...(validator ? { "If-Range": validator } : {}) } : {};
  let res: Response;
  try {
    res = await fetch(url, { headers, redirect: "follow", signal });
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    throw new Unreachable(`cannot reach ${new URL(url).host}: ${err.cause?.code ?? err.cause?.message ?? err.message}`);
  }
  if (from && res.status === 200) {
    await res.body?.cancel();
    throw new Restart(`the server does not resume downloads (it answered 200, not 206, to a range request)`);
  }
  if (from && res.status === 206) {
    const start = Number(/^bytes (\d+)-/.exec(res.headers.get("content-range") ?? "")?.[1]);
    if (start !== from) {
      await res.body?.cancel();
      throw new Restart(`the server resumed at another byte than asked (${res.headers.get("content-range")})`);
    }
    return res;
  }
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    throw new RestoreFailure(`${shown(res.url || url)} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
  }
  return res;
}

function lengthOf(res: Response): number | undefined {
  const n = Number(res.headers.get("content-length") ?? NaN);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** The verified stage becomes the database: entries move to the root (same file system: renames). */
async function moveIntoPlace(o: RestoreOptions, stage: string): Promise<void> {
  const db = join(stage, "db");
  for (const name of await readdir(db)) {
    await rename(join(db, name), join(o.dest, name));
    if (o.owner) await chownTree(join(o.dest, name), o.owner);
  }
  if (o.owner) await chown(o.dest, o.owner.uid, o.owner.gid);
  await rm(stage, { recursive: true, force: true });
}

async function chownTree(path: string, owner: { uid: number; gid: number }): Promise<void> {
  await chown(path, owner.uid, owner.gid);
  const children = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const c of children) await chownTree(join(path, c.name), owner);
}

/** The volume was empty before this restore: everything in it now is the restore's. */
async function emptyVolume(dest: string): Promise<void> {
  for (const name of await readdir(dest)) if (!IGNORED.has(name)) await rm(join(dest, name), { recursive: true, force: true });
}

/** One line naming the cause: disk full, corrupt, truncated, HTTP status. */
export function causeOf(e: unknown): string {
  const err = e as Error & { code?: string; tarCode?: string };
  if (err instanceof RestoreFailure) return err.message;
  if (err.code === "ENOSPC" || /ENOSPC/.test(err.message)) return "disk full: no space left on the volume while writing the database";
  if (err.code === "ZSTD_error_srcSize_wrong" || /unexpected end/i.test(err.message)) return `truncated: the archive ends inside a zstd frame (${err.message})`;
  if (err.code?.startsWith("ZSTD_") || /zstd|Z_DATA_ERROR/i.test(`${err.code} ${err.message}`)) return `corrupt: not a valid zstd stream (${err.code ?? ""} ${err.message})`.replace(/\( /, "(");
  if (/Truncated input/.test(err.message)) return `truncated: the archive ends inside a file (${err.message})`;
  if (err.tarCode || err.code?.startsWith("TAR_")) return `corrupt: not a valid tar archive (${err.tarCode ?? err.code}: ${err.message})`;
  return `${err.code ? `${err.code}: ` : ""}${err.message}`;
}
