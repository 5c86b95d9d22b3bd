/**
 * A restore's progress as it is shared: the status file the restore keeps in the volume while it
 * runs (the disk watcher reads it, so the gateway can say how far it is), the log line, and the
 * tagged result line `pulumi up` reads. Pure, apart from reading and writing the file. It lives
 * below restore/ (which writes it) and readiness/ (which reads it), so neither imports the other.
 */
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Everything a restore writes before it is complete lives here, inside the volume. */
export const STAGE_DIR = ".rpcstack-restore";
export const STATUS_FILE = "status.json";
/** The tag before the restore's one result line in its log. */
export const RESTORE_RESULT_PREFIX = "RPCSTACK_RESTORE ";

export interface RestoreProgress {
  /** The archive's host and path (no query: signed URLs carry tokens there). */
  readonly source: string;
  /** Archive bytes received (compressed). */
  readonly doneBytes: number;
  /** The archive's size, when the server said it. */
  readonly totalBytes?: number;
  /** Bytes written to the volume so far. */
  readonly unpackedBytes: number;
  readonly bytesPerSecond: number;
  readonly etaSeconds?: number;
  readonly startedAt: string;
  readonly updatedAt: string;
}

export type RestoreResult =
  | { readonly outcome: "kept"; readonly entries: number }
  | { readonly outcome: "restored"; readonly bytes: number; readonly unpackedBytes: number; readonly seconds: number; readonly resumes: number; readonly restarts: number }
  | { readonly outcome: "failed"; readonly cause: string };

const GB = 1e9;
const num = (n: number, digits: number) => n.toFixed(digits);

export function formatBytes(n: number): string {
  if (n >= GB) return `${num(n / GB, 1)} GB`;
  if (n >= 1e6) return `${num(n / 1e6, 1)} MB`;
  if (n >= 1e3) return `${num(n / 1e3, 1)} kB`;
  return `${n} B`;
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  return `${Math.floor(s / 3600)}h ${Math.round((s % 3600) / 60)}m`;
}

/** The archive's host and path: its query stays out of logs and the status file (signed URLs carry tokens there). */
export function formatSource(url: string): string {
  const u = new URL(url);
  return `${u.host}${u.pathname}`;
}

/** "1.2 of 195.1 GB (0.6%), 45.0 MB/s, about 1h 12m left" */
export function describeProgress(p: RestoreProgress): string {
  const total = p.totalBytes ? ` of ${formatBytes(p.totalBytes)} (${num((100 * p.doneBytes) / p.totalBytes, 1)}%)` : "";
  const eta = p.etaSeconds !== undefined ? `, about ${formatDuration(p.etaSeconds)} left` : "";
  return `${formatBytes(p.doneBytes)}${total}, ${formatBytes(p.bytesPerSecond)}/s${eta}; ${formatBytes(p.unpackedBytes)} written`;
}

/** Written whole, then renamed into place: a reader sees the last progress or the one before. */
export async function writeProgress(volumeRoot: string, p: RestoreProgress): Promise<void> {
  const file = join(volumeRoot, STAGE_DIR, STATUS_FILE);
  await writeFile(`${file}.tmp`, JSON.stringify(p));
  await rename(`${file}.tmp`, file);
}

/** The progress a restore in `volumeRoot` last wrote, or undefined when none is running there. */
export async function readProgress(volumeRoot: string): Promise<RestoreProgress | undefined> {
  const text = await readFile(join(volumeRoot, STAGE_DIR, STATUS_FILE), "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const p = JSON.parse(text) as RestoreProgress;
    return typeof p.doneBytes === "number" && typeof p.source === "string" ? p : undefined;
  } catch {
    // Caught between the restore's write and rename: the next read has it.
    return undefined;
  }
}
