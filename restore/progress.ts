/** A running restore's progress, reported as a log line and in the status file, now and then. */
import { describeProgress, formatSource, writeProgress, type RestoreProgress } from "./status.js";

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

  stop(): void {
    clearInterval(this.timer);
  }

  async report(): Promise<void> {
    const p = this.progress();
    this.o.log(`rpcstack-restore: ${describeProgress(p)}`);
    await writeProgress(this.o.dest, p);
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
