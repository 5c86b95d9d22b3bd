/** Where a bench part ran: the machine, the HAProxy release, and the load average before and after it. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { haproxyBinary } from "../devtools/haproxy.js";
import { fig } from "./figures.js";

/** The CPU's model name as /proc/cpuinfo gives it (the first processor's). */
export function cpuModel(cpuinfo: string): string | undefined {
  return /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1].trim();
}

/** The HAProxy release in `haproxy -v`'s first line ("HAProxy version 3.2.26-1 2026/10/14 - ..." -> "3.2.26-1"). */
export function haproxyRelease(versionLine: string): string | undefined {
  return /^HA-?Proxy version (\S+)/.exec(versionLine)?.[1];
}

export interface Machine {
  readonly cores: number;
  readonly cpu?: string;
  /** The release the gateway cases ran (the one production pins), and `haproxy -v`'s line. */
  readonly haproxyRelease?: string;
  readonly haproxy: string;
}

export function machine(): Machine {
  const haproxy = execFileSync(haproxyBinary(), ["-v"], { encoding: "utf8" }).split("\n")[0];
  let cpu: string | undefined;
  try {
    cpu = cpuModel(readFileSync("/proc/cpuinfo", "utf8"));
  } catch {
    cpu = cpus()[0]?.model;
  }
  return { cores: cpus().length, cpu, haproxyRelease: haproxyRelease(haproxy), haproxy };
}

/** The 1, 5 and 15 minute load averages now. */
export const loadAverage = (): number[] => loadavg().map(fig);

export interface Part {
  readonly startedAt: string;
  readonly endedAt: string;
  /** The 1, 5 and 15 minute load averages when the part started and when it ended. */
  readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] };
  /** Why the part did not run, where it did not. */
  readonly skipped?: string;
}

/** Starts timing a part: the load average now, and `end()` its record (with the load average then). */
export function partTimer(): { readonly loadAverageAtStart: readonly number[]; end(skipped?: string): Part } {
  const startedAt = new Date().toISOString();
  const start = loadAverage();
  return { loadAverageAtStart: start, end: (skipped) => ({ startedAt, endedAt: new Date().toISOString(), loadAverage: { start, end: loadAverage() }, ...(skipped ? { skipped } : {}) }) };
}

/** Where a part's time goes: `lap(name)` ends a phase begun at the last lap (or the start); `line()` lists them, e.g. "warm-up 33 s, rounds 40 s". */
export function laps(now: () => number = Date.now): { lap(name: string): void; line(): string } {
  let last = now();
  const done: [string, number][] = [];
  return {
    lap(name) {
      const t = now();
      done.push([name, Math.round((t - last) / 1000)]);
      last = t;
    },
    line: () => done.map(([n, s]) => `${n} ${s} s`).join(", "),
  };
}
