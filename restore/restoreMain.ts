/**
 * rpcstack-restore: restores an L2 node's database from a snapshot into its volume before the node
 * starts (restore/restore.ts says how). Runs as the L2 node's init container, bundled into one file.
 */
import { parseArgs } from "node:util";
import { numberArg, optionsOrExit, UsageError } from "../kit/args.js";
import { restore, type RestoreOptions } from "./restore.js";
import type { ArchiveFormat } from "./unpack.js";
import { RESTORE_RESULT_PREFIX } from "../volumes/restoreStatus.js";

const USAGE = `usage: rpcstack-restore --url URL --dest DIR --format FORMAT --need-bytes N [options]
  --url URL               the snapshot archive (https://)
  --dest DIR              the node's data volume; one that holds anything is left as it is
  --format FORMAT         tar.zst (a zstd-compressed tar of the database folder) or
                          zst:FILE (one zstd-compressed file, written as FILE)
  --need-bytes N          free space the unpacked database needs; less is refused before downloading
  --sha256 HEX            the archive's SHA-256; another is refused and the volume emptied
  --size-bytes N          the archive's size; another is refused
  --owner UID:GID         give the restored files to the node's user
  --retries N             resumes or restarts after a dropped connection (5)
  --stall-seconds N       a download silent this long counts as dropped (60)
  --progress-seconds N    between progress lines (10)
  --help                  this text
Exit: 0 restored, or the volume already held a database; 1 failed (the volume is empty again, the
next start tries again); 2 bad arguments.`;

export function parseRestoreCli(argv: string[]): Omit<RestoreOptions, "log"> | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: "string" },
        dest: { type: "string" },
        format: { type: "string" },
        "need-bytes": { type: "string" },
        sha256: { type: "string" },
        "size-bytes": { type: "string" },
        owner: { type: "string" },
        retries: { type: "string" },
        "progress-seconds": { type: "string" },
        "stall-seconds": { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return "help";
  const url = values.url ?? missing("url");
  if (!/^https:\/\/[^\s/]+/.test(url)) throw new UsageError(`--url must be an https:// URL (got "${url}")`);
  const dest = values.dest ?? missing("dest");
  if (!dest.startsWith("/")) throw new UsageError(`--dest must be an absolute path (got "${dest}")`);
  const sha256 = values.sha256;
  if (sha256 !== undefined && !/^[0-9a-f]{64}$/.test(sha256)) throw new UsageError(`--sha256 must be 64 lowercase hex digits (got "${sha256}")`);
  const owner = values.owner === undefined ? undefined : /^(\d+):(\d+)$/.exec(values.owner) ?? bad(`--owner must be UID:GID (got "${values.owner}")`);
  return {
    url,
    dest,
    format: parseFormat(values.format ?? missing("format")),
    needBytes: numberArg("need-bytes", values["need-bytes"] ?? missing("need-bytes"), 0, { min: 0, integer: true }),
    ...(sha256 ? { sha256 } : {}),
    ...(values["size-bytes"] !== undefined ? { sizeBytes: numberArg("size-bytes", values["size-bytes"], 0, { min: 1, integer: true }) } : {}),
    ...(owner ? { owner: { uid: Number(owner[1]), gid: Number(owner[2]) } } : {}),
    retries: numberArg("retries", values.retries, 5, { min: 0, max: 1000, integer: true }),
    stallMs: numberArg("stall-seconds", values["stall-seconds"], 60, { min: 0.1, max: 3600 }) * 1000,
    progressMs: numberArg("progress-seconds", values["progress-seconds"], 10, { min: 0.1, max: 3600 }) * 1000,
  };
}

function parseFormat(v: string): ArchiveFormat {
  if (v === "tar.zst") return { kind: "tar.zst" };
  const m = /^zst:([A-Za-z0-9._-]+)$/.exec(v);
  if (m) return { kind: "zst", file: m[1] };
  throw new UsageError(`--format must be tar.zst or zst:FILE (got "${v}")`);
}

function missing(name: string): never {
  throw new UsageError(`--${name} is required`);
}

function bad(message: string): never {
  throw new UsageError(message);
}

export async function main(argv: string[]): Promise<number> {
  const opts = optionsOrExit("rpcstack-restore", USAGE, () => parseRestoreCli(argv));
  if (typeof opts === "number") return opts;
  const result = await restore({ ...opts, log: (l) => process.stdout.write(`${l}\n`) });
  if (result.outcome === "failed") {
    process.stdout.write(`rpcstack-restore: FAILED: ${result.cause}. The volume is empty again; the next start tries again.\n`);
  }
  process.stdout.write(`${RESTORE_RESULT_PREFIX}${JSON.stringify(result)}\n`);
  return result.outcome === "failed" ? 1 : 0;
}

// No process.exit: it can hang for good while zstd work from a destroyed stream is still on the
// thread pool (seen with Node 24.19 as a container's PID 1); the loop drains and ends by itself,
// and an unref'd timer ends what lingers past 30 s.
if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
    setTimeout(() => process.exit(code), 30_000).unref();
  });
}
