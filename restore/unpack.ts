/**
 * The archive's bytes into the staging folder: zstd, then a tar unpacked into a folder (Juno) or
 * one file written whole (Pathfinder), watching enough of the output to tell a complete tar.
 */
import { createWriteStream } from "node:fs";
import { join } from "node:path";
import { Transform, Writable, type TransformCallback } from "node:stream";
import * as zlib from "node:zlib";
import { x as untar } from "tar";
import { RestoreFailure } from "./failure.js";

export type ArchiveFormat = { readonly kind: "tar.zst" } | { readonly kind: "zst"; readonly file: string };

/** A tar ends with two 512-byte blocks of zeros. */
const TAR_END = 1024;

/** Node's own zstd (22.15 / 23.8 and later; the pinned Node image is 24). */
export function zstdDecompressor(): Transform {
  const make = (zlib as unknown as { createZstdDecompress?: (o: { chunkSize: number }) => Transform }).createZstdDecompress;
  if (!make) throw new RestoreFailure(`this Node.js (${process.version}) cannot decompress zstd; run the restore with Node.js 22.15 or later`);
  // 1 MiB output chunks (zlib's default is 16 KiB): fewer, larger writes through tar to the disk.
  return make({ chunkSize: 1 << 20 });
}

/** Passes the decompressed bytes on, counting them and keeping the last TAR_END of them. */
export class DecompressedBytes extends Transform {
  count = 0;
  private tail = Buffer.alloc(0);

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.count += chunk.length;
    this.tail = Buffer.concat([this.tail, chunk]).subarray(-TAR_END);
    cb(null, chunk);
  }

  /** Whether the output ends as a whole tar does; one cut short at a file boundary does not. */
  endsWithTarMarker(): boolean {
    return this.tail.length >= TAR_END && this.tail.every((b) => b === 0);
  }
}

/** Where the decompressed bytes go: unpacked into dir, or one file there. */
export function unpacker(format: ArchiveFormat, dir: string, log: (line: string) => void): Writable {
  if (format.kind === "zst") return createWriteStream(join(dir, format.file));
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
      if (code === "TAR_ENTRY_INFO") return log(`rpcstack-restore: note: ${message instanceof Error ? message.message : message}`);
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
