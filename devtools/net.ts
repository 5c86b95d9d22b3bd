/** Loopback helpers for real-process tests and the bench: free ports, waiting for a server, stopping children. */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { createServer } from "node:net";
import { constants } from "node:os";

/** Ports this process was handed: the system may give a port it just gave again, before its caller bound it. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const srv = createServer();
      srv.once("error", reject);
      srv.listen(0, "127.0.0.1", () => {
        const { port } = srv.address() as { port: number };
        srv.close(() => resolve(port));
      });
    });
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} not ready within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ""}`);
}

export interface Child {
  readonly proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Process groups started here and not yet ended. A test that times out never reaches its clean-up,
 * so what it started is ended when this process exits (a gateway left running kept its ports and
 * health checks through the rest of the run).
 */
const running = new Set<number>();
const endRunning = () => {
  for (const pid of running) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  }
};
process.once("exit", endRunning);
// A test runner ends its workers with a signal, which skips "exit".
for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => (endRunning(), process.exit(128 + constants.signals[signal])));

/** Starts a process in its own group so stop() ends it and anything it started. */
export function start(cmd: string, args: string[], opts: SpawnOptions = {}): Child {
  const proc = spawn(cmd, args, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  if (proc.pid) running.add(proc.pid);
  proc.once("exit", () => running.delete(proc.pid!));
  let out = "";
  proc.stdout?.on("data", (d) => (out += d));
  proc.stderr?.on("data", (d) => (out += d));
  // A program that is not installed: said in its output (which the waiting test reports), not thrown outside any test.
  proc.once("error", (e) => (out += `${cmd} could not be started: ${e.message}\n`));
  return {
    proc,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once("exit", () => resolve());
        try {
          process.kill(-proc.pid!, "SIGTERM");
        } catch {
          resolve();
        }
        setTimeout(() => {
          try {
            process.kill(-proc.pid!, "SIGKILL");
          } catch {}
        }, 3000).unref();
      }),
  };
}

export async function jsonRpc(url: string, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Stops each of them in order, skipping what never started (an afterAll after a failed beforeAll). */
export async function stopEach(...running: readonly ({ stop(): Promise<void> } | undefined)[]): Promise<void> {
  for (const r of running) await r?.stop();
}
