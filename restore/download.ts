/**
 * The archive over HTTP(S), counted and hashed as it arrives. A dropped connection (broken, stalled,
 * or ended early) resumes with a Range request; a server that will not resume is a Restart.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { RestoreFailure } from "./failure.js";
import { formatBytes, formatSource } from "../volumes/restoreStatus.js";

export interface DownloadOptions {
  readonly url: string;
  readonly sizeBytes?: number;
  /** Resumes (or restarts) after a dropped connection, in all. */
  readonly retries: number;
  /** A download that sends nothing for this long counts as dropped. */
  readonly stallMs: number;
  readonly log: (line: string) => void;
}

/** The server cannot resume where the download broke: start again from the first byte. */
export class Restart extends Error {}
/** The server could not be reached: fatal for the first request, a dropped line to resume after later. */
class Unreachable extends RestoreFailure {}

/** One pass over the archive from its first byte: resumes within it, throws Restart where it cannot. */
export class ArchiveDownload {
  /** Archive bytes received. */
  done = 0;
  /** The archive's size, when the server (or sizeBytes) said it. */
  total: number | undefined;
  readonly hash = createHash("sha256");

  constructor(
    private readonly o: DownloadOptions,
    /** Shared with the passes before and after this one: retries count across them. */
    private readonly counters: { resumes: number },
  ) {}

  async *chunks(): AsyncGenerator<Buffer> {
    const o = this.o;
    let validator: string | undefined;
    // After the first answer: the file `latest` redirected to, so a resume cannot land on next week's snapshot.
    let url = o.url;
    for (;;) {
      // A connection that stays open without sending is as lost as one that broke.
      const stalled = new AbortController();
      let watchdog = setTimeout(() => stalled.abort(), o.stallMs);
      let lost: string | undefined;
      try {
        const res = await get(url, this.done, validator, stalled.signal);
        if (this.done === 0) {
          url = res.url || o.url;
          this.total = lengthOf(res);
          validator = res.headers.get("etag") ?? res.headers.get("last-modified") ?? undefined;
          if (o.sizeBytes !== undefined && this.total !== undefined && this.total !== o.sizeBytes) {
            throw new RestoreFailure(`the server offers ${this.total} bytes but rpcstack:l2.snapshot.sizeBytes says ${o.sizeBytes}: not the expected archive`);
          }
          this.total ??= o.sizeBytes;
        }
        for await (const chunk of Readable.fromWeb(res.body as any) as AsyncIterable<Buffer>) {
          clearTimeout(watchdog);
          watchdog = setTimeout(() => stalled.abort(), o.stallMs);
          this.hash.update(chunk);
          this.done += chunk.length;
          yield chunk;
        }
      } catch (e) {
        // Unreachable on the first request is a failure; later, a dropped line to resume after.
        if (e instanceof Restart || (e instanceof RestoreFailure && !(e instanceof Unreachable && this.done > 0))) throw e;
        lost = stalled.signal.aborted
          ? `the download stalled (no data for ${o.stallMs / 1000} s) after ${formatBytes(this.done)}`
          : `the connection broke after ${formatBytes(this.done)} (${(e as Error).message})`;
      } finally {
        clearTimeout(watchdog);
      }
      if (lost === undefined && (this.total === undefined || this.done >= this.total)) return;
      lost ??= `the server ended the download after ${formatBytes(this.done)} of ${formatBytes(this.total!)}`;
      this.counters.resumes++;
      if (this.counters.resumes > o.retries) throw new RestoreFailure(`truncated: ${lost}, and ${o.retries} retries are spent`);
      const wait = Math.min(30_000, 1000 * 2 ** (this.counters.resumes - 1));
      o.log(`rpcstack-restore: ${lost}; resuming at byte ${this.done} in ${wait / 1000} s (retry ${this.counters.resumes} of ${o.retries})`);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
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
    throw new RestoreFailure(`${formatSource(res.url || url)} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
  }
  return res;
}

function lengthOf(res: Response): number | undefined {
  const n = Number(res.headers.get("content-length") ?? NaN);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}
