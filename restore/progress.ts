/** A running restore's progress, reported as a log line and in the status file, now and then. */
import { describeProgress, formatSource, writeProgress, type RestoreProgress } from "../volumes/restoreStatus.js";

export interface ProgressOptions {
  readonly url: string;
  /** The volume whose staging folder holds the status file. */
  readonly dest: string;
  readonly progressMs: number;
  readonly log: (line: string) => void;
}

export interface ProgressCounts {
  readonly done: number;
  readonly total: number | undefined;
  readonly unpacked: number;
}

export class ProgressReporter {
  private last = { at: Date.now(), done: 0, rate: 0 };
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly o: ProgressOptions,
    private readonly started: number,
    private readonly counts: () => ProgressCounts,
  ) {}

  /** Reports now, then every progressMs until stop(). */
  async start(): Promise<void> {
    await this.report();
    this.timer = setInterval(() => void this.report().catch(() => undefined), this.o.progressMs);
  }

  /** No report after this; resolves once one still being written is on disk. */
  stop(): Promise<void> {
    clearInterval(this.timer);
    return this.writing;
  }

  async report(): Promise<void> {
    const p = this.progress();
    this.o.log(`rpcstack-restore: ${describeProgress(p)}`);
    // One write at a time: a timer's report still being written when the next starts would have
    // its temporary file renamed away under it (ENOENT), since both use the same name.
    const written = this.writing.then(() => writeProgress(this.o.dest, p));
    this.writing = written.catch(() => undefined);
    await written;
  }

  /** The rate is smoothed over reports (half the last rate, half this interval's) so the ETA does not jump. */
  private progress(): RestoreProgress {
    const { done, total, unpacked } = this.counts();
    const last = this.last;
    const now = Date.now();
    const dt = (now - last.at) / 1000;
    const rate = dt > 0 ? (last.rate ? 0.5 * last.rate + 0.5 * ((done - last.done) / dt) : (done - last.done) / dt) : last.rate;
    this.last = { at: now, done, rate };
    return {
      source: formatSource(this.o.url),
      doneBytes: done,
      ...(total !== undefined ? { totalBytes: total } : {}),
      unpackedBytes: unpacked,
      bytesPerSecond: Math.round(rate),
      ...(total !== undefined && rate > 0 ? { etaSeconds: Math.round((total - done) / rate) } : {}),
      startedAt: new Date(this.started).toISOString(),
      updatedAt: new Date(now).toISOString(),
    };
  }
}
