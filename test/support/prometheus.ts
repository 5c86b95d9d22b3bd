/**
 * Prometheus and promtool at the monitoring image's pin (built from the Go module by
 * scripts/clients/build.sh) on what the plan generates, in a temporary folder.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { clientBinary } from "../../devtools/clients.js";
import type { MonitoringPlan } from "../../plan/index.js";
import { freePort, start, waitFor, type Child } from "./net.js";

/** The plan's prometheus.yml and rule file, written into a new temporary folder; returns the folder. */
export function writeMonitoringFiles(plan: MonitoringPlan, over: Readonly<Record<string, string>> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-prom-"));
  for (const f of plan.files) writeFileSync(join(dir, f.name), over[f.name] ?? f.content);
  return dir;
}

const prometheusBinary = () => clientBinary("prometheus");

/** promtool's exit status and everything it said (stdout first). */
export function promtool(args: readonly string[], cwd: string, input?: string): { status: number | null; output: string } {
  const r = spawnSync(join(dirname(prometheusBinary()), "promtool"), args, { cwd, input, encoding: "utf8" });
  if (r.error) throw new Error(`promtool (scripts/clients/build.sh prometheus): ${r.error.message}`);
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

export interface RunningPrometheus {
  readonly url: string;
  query(expr: string): Promise<{ status: string; error?: string; data?: { result: unknown[] } }>;
  stop(): Promise<void>;
}

/** A real Prometheus on 127.0.0.1 with the folder's prometheus.yml, its data in the folder. */
export async function startPrometheus(dir: string): Promise<RunningPrometheus> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: Child = start(prometheusBinary(), [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`]);
  try {
    await waitFor("prometheus", async () => ((await fetch(`${url}/-/ready`).catch(() => undefined))?.ok ? true : undefined), 30_000);
  } catch (e) {
    await child.stop();
    throw new Error(`${(e as Error).message}\n${child.output()}`);
  }
  return {
    url,
    query: async (expr) => (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`)).json() as never,
    stop: () => child.stop(),
  };
}
