/** Docker and docker-compose as the end-to-end test drives them: the CLIs, as an operator would. */
import { spawnSync } from "node:child_process";

export interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], opts: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Ran {
  const r = spawnSync(cmd, args, { cwd: opts.cwd, encoding: "utf8", timeout: opts.timeoutMs ?? 300_000, maxBuffer: 64 << 20, env: opts.env ?? process.env });
  return { status: r.error ? null : r.status, stdout: r.stdout ?? "", stderr: (r.stderr ?? "") + (r.error ? String(r.error) : "") };
}

/** Runs and returns stdout, or throws with what the command said. */
export function must(cmd: string, args: readonly string[], opts: Parameters<typeof run>[2] = {}): string {
  const r = run(cmd, args, opts);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}:\n${r.stderr}${r.stdout}`.slice(0, 8000));
  return r.stdout.trim();
}

/** Why the end-to-end test cannot run here, or undefined when a daemon and docker-compose answer. */
export function engineMissing(): string | undefined {
  const v = run("docker", ["version", "--format", "{{.Server.Version}}"], { timeoutMs: 15_000 });
  if (v.status !== 0 || !v.stdout.trim()) return `no Docker daemon answers (${(v.stderr.trim().split("\n").pop() ?? "").slice(0, 200)})`;
  const c = run("docker-compose", ["version", "--short"], { timeoutMs: 15_000 });
  if (c.status !== 0) return "docker-compose is not installed (Debian package docker-compose)";
  return undefined;
}

/**
 * Removes whatever `down` could not reach (a file never written, a half-started project): the
 * containers, volumes and networks whose names carry `prefix`. Returns what is still there.
 */
export function removeByPrefix(prefix: string): string[] {
  const left = (kind: string, args: string[]) => run("docker", [kind, "ls", ...args, "-q", "--filter", `name=${prefix}`]).stdout.split("\n").filter(Boolean);
  const containers = left("container", ["-a"]);
  if (containers.length) run("docker", ["rm", "-f", "-v", ...containers]);
  for (const v of left("volume", [])) run("docker", ["volume", "rm", "-f", v]);
  for (const n of left("network", [])) run("docker", ["network", "rm", n]);
  return ["container", "volume", "network"].flatMap((k) => left(k, k === "container" ? ["-a"] : []).map((id) => `${k} ${id}`));
}

export const inspect = (name: string, format: string) => must("docker", ["inspect", "--format", format, name]);

/** Waits until every named container's own health check says healthy; throws with their logs. */
export async function waitHealthy(containers: readonly string[], timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  const status = () => containers.map((c) => [c, run("docker", ["inspect", "--format", "{{if .State.Health}}{{.State.Health.Status}}{{else}}{{.State.Status}}{{end}}", c]).stdout.trim()] as const);
  for (;;) {
    const s = status();
    if (s.every(([, st]) => st === "healthy")) return Date.now() - t0;
    const bad = s.find(([, st]) => st === "unhealthy" || st === "exited" || st === "");
    if (bad || Date.now() - t0 > timeoutMs) {
      const tail = (c: string) => {
        const r = run("docker", ["logs", "--tail", "30", c]);
        return r.stderr + r.stdout;
      };
      const logs = containers.map((c) => `--- ${c} (${s.find(([n]) => n === c)?.[1]}):\n${tail(c)}`).join("\n");
      throw new Error(`${bad ? `${bad[0]} is ${bad[1] || "missing"}` : `not healthy within ${timeoutMs / 1000} s`}: ${s.map(([c, st]) => `${c}=${st}`).join(", ")}\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A named volume whose data path is a small ext4 file system of its own, so a test can fill it. */
export interface SmallVolume {
  readonly name: string;
  /** Unmounts the file system, removes the volume and detaches the loop device; safe to call twice. */
  remove(): void;
}

export function smallVolume(name: string, imageFile: string, size = "64M"): SmallVolume {
  let loop = "";
  let data = "";
  const remove = () => {
    // The file system first, or the volume cannot be removed.
    if (data) run("umount", [data]);
    run("docker", ["volume", "rm", "-f", name]);
    if (loop) run("losetup", ["-d", loop]);
    loop = data = "";
  };
  try {
    must("truncate", ["-s", size, imageFile]);
    must("mkfs.ext4", ["-q", imageFile]);
    loop = must("losetup", ["--find", "--show", imageFile]);
    // A plain volume (compose refuses one with other driver options) with the file system mounted on its data path.
    must("docker", ["volume", "create", name]);
    data = must("docker", ["volume", "inspect", "--format", "{{.Mountpoint}}", name]);
    must("mount", [loop, data]);
  } catch (e) {
    remove();
    throw e;
  }
  return { name, remove };
}
