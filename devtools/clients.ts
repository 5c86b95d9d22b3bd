/**
 * Software the stack's images run, built from its package registries by scripts/clients/build.sh
 * (geth and Prometheus from their Go modules), for the tests that run the real software instead of
 * a stand-in.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

// Not the harness's ROOT: the image build runs outside vitest too (tsx devtools/images/build.ts).
const ROOT = join(__dirname, "..");

export type BuiltClient = "geth" | "starknet-devnet" | "wasmd" | "prometheus" | "starknet-py";

/**
 * The client's binary at the stack's pin, building it first when the cache lacks it (a few minutes,
 * once per machine; `.ci/run` builds it before the tests).
 */
export function clientBinary(client: BuiltClient, log: (s: string) => void = console.log): string {
  return cachedBuild("scripts/clients/build.sh", client, log);
}

/**
 * A binary from one of the build scripts' caches (each takes `--print-path NAME` and `NAME`),
 * building it first when the cache lacks it.
 */
export function cachedBuild(script: string, name: string, log: (s: string) => void = console.log): string {
  const path = execFileSync("bash", [join(ROOT, script), "--print-path", name], { encoding: "utf8" }).trim();
  if (!existsSync(path)) {
    const t0 = Date.now();
    try {
      execFileSync("bash", [join(ROOT, script), name], { stdio: "pipe", maxBuffer: 64 << 20 });
    } catch (e) {
      // The scripts say why on stdout; execFileSync's own message only names the command.
      const { stdout, stderr } = e as { stdout?: Buffer; stderr?: Buffer };
      throw new Error(`${script} ${name} failed:\n${String(stdout ?? "").trim().split("\n").slice(-20).join("\n")}\n${String(stderr ?? "").trim().split("\n").slice(-10).join("\n")}`);
    }
    log(`built ${name} from its registry in ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  return path;
}

/** A spec's flags with every listen address on loopback and every fixed port replaced. */
export function onLoopback(args: readonly string[], ports: Record<string, number>): string[] {
  return args.map((a) => {
    const [flag, value] = a.split("=");
    if (value === "0.0.0.0") return `${flag}=127.0.0.1`;
    if (value !== undefined && ports[value] !== undefined) return `${flag}=${ports[value]}`;
    return a;
  });
}
