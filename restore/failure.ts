/** How a restore fails: in words the operator reads, whatever threw. */

/** A failure with its cause in words: what the operator reads. */
export class RestoreFailure extends Error {}

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
