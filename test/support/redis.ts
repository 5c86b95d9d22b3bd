/** Debian's redis-server on a loopback port the test picks, with nothing saved to disk: the counter store replicas share. */
import { connect } from "node:net";
import { freePort, start, waitFor } from "./net.js";

export interface RunningRedis {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  logs(): string;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<RunningRedis> {
  const port = await freePort();
  const child = start("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes"]);
  const up = await waitFor("redis-server", () =>
    child.proc.exitCode !== null
      ? Promise.resolve(false)
      : new Promise<boolean | undefined>((resolve) => {
          const s = connect(port, "127.0.0.1", () => s.write("PING\r\n"));
          s.once("data", (d) => (s.destroy(), resolve(String(d).startsWith("+PONG") || undefined)));
          s.once("error", () => resolve(undefined));
        }),
  10_000);
  if (!up) {
    await child.stop();
    throw new Error(`redis-server did not start (is Debian's redis-server installed?):\n${child.output()}`);
  }
  return { url: `redis://127.0.0.1:${port}`, port, pid: child.proc.pid!, logs: child.output, stop: child.stop };
}
