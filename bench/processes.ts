/** What a bench script starts: a work directory and the processes it runs, all ended on exit or Ctrl-C. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface BenchProcesses {
  readonly work: string;
  /** Starts a process in its own group; an exit before stopAll is reported with the end of its output. */
  start(name: string, cmd: string, argv: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** A process (or process group id) started elsewhere, such as the gateway's HAProxy or the node, to end with the rest. */
  adopt(p: ChildProcess | number): void;
  stopAll(): void;
}

export function benchProcesses(prefix: string): BenchProcesses {
  const work = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const groups: number[] = [];
  let stopping = false;
  const stopAll = () => {
    stopping = true;
    for (const pid of groups) {
      try {
        process.kill(-pid, "SIGTERM");
      } catch {}
    }
    rmSync(work, { recursive: true, force: true });
  };
  process.on("SIGINT", () => (stopAll(), process.exit(130)));
  return {
    work,
    start(name, cmd, argv, env = process.env) {
      const p = spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"], detached: true, env });
      let log = "";
      const keep = (d: Buffer) => (log = (log + d).slice(-4000));
      p.stdout!.on("data", keep);
      p.stderr!.on("data", keep);
      p.on("exit", (code) => code !== 0 && !stopping && console.error(`${name} exited (${code}): ${log}`));
      // A program that cannot start (not installed) would otherwise end the bench before stopAll.
      p.on("error", (e) => {
        console.error(`${name} (${cmd}) could not start: ${e.message}`);
        stopAll();
        process.exit(1);
      });
      groups.push(p.pid!);
      return p;
    },
    adopt: (p) => void groups.push(typeof p === "number" ? p : p.pid!),
    stopAll,
  };
}

/** Runs a bench's main, ends what it started, and exits 0 or 1 with the error. */
export function runBench(procs: BenchProcesses, main: () => Promise<void>): void {
  main()
    .then(() => (procs.stopAll(), process.exit(0)))
    .catch((e) => {
      // fetch's own message is "fetch failed"; what failed is in its cause.
      console.error(e instanceof Error ? `${e.message}${e.cause ? `: ${(e.cause as Error).message ?? e.cause}` : ""}` : e);
      procs.stopAll();
      process.exit(1);
    });
}
