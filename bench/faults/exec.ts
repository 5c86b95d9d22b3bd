/**
 * Commands the run gives while its clients call: asynchronous, so the clients and the head poller
 * keep running (a synchronous spawn would stall them all, and the gateway would close their idle
 * connections meanwhile).
 */
import { execFile } from "node:child_process";

/** Runs and resolves with stdout, or rejects with what the command said. */
export function exec(cmd: string, args: readonly string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, [...args], { cwd: opts.cwd, timeout: opts.timeoutMs ?? 900_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(" ")} failed: ${err.message}\n${stderr}${stdout}`.slice(0, 8000))) : resolve(stdout.trim()),
    ),
  );
}
