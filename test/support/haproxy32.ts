/**
 * HAProxy 3.2 (Debian unstable's package: the release line of the gateway's production image) in
 * a container on the host's network, for startGateway: what 3.2 does differently from Debian
 * bookworm's 2.6 is tested on it. The image is built once per machine (a debootstrap of unstable,
 * then the package), tagged by a hash of what went into it.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { debianBase } from "../e2e/images/build.js";
import { engineMissing } from "../e2e/docker.js";
import { start } from "./net.js";
import type { HaproxyRunner } from "./haproxy.js";

const DOCKERFILE = join(__dirname, "haproxy32.Dockerfile");
const REPO = "rpcstack-test";

const docker = (args: string[]) => execFileSync("docker", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20, env: { ...process.env, DOCKER_BUILDKIT: "0" } }).trim();

/** Why HAProxy 3.2 cannot run here (no Docker daemon), or undefined. */
export const haproxy32Missing = (): string | undefined => engineMissing();

/** The image's reference, built when this machine has none yet (about 3 minutes). */
export function haproxy32Image(log: (s: string) => void = console.log): string {
  const base = debianBase(log, "sid", `${REPO}/debian`);
  const hash = createHash("sha256").update(docker(["image", "inspect", "--format", "{{.Id}}", base])).update(readFileSync(DOCKERFILE)).digest("hex").slice(0, 12);
  const ref = `${REPO}/haproxy:3.2-${hash}`;
  try {
    docker(["image", "inspect", "--format", "{{.Id}}", ref]);
  } catch {
    const t0 = Date.now();
    docker(["build", "-q", "-f", DOCKERFILE, "--build-arg", `BASE=${base}`, "-t", ref, join(__dirname)]);
    log(`built ${ref} in ${Math.round((Date.now() - t0) / 1000)} s`);
  }
  return ref;
}

/**
 * Runs `haproxy` from the image on the host's network, with `dirs` mounted at their own paths (the
 * gateway's files, the package's Lua, the test CA), so the generated configuration reads as it is.
 */
export function dockerHaproxy(image: string, dirs: readonly string[], namePrefix = "rpcstack-test"): HaproxyRunner {
  const args = (name: string, env: Record<string, string>) => [
    "run", "--rm", "-i", "--name", name, "--network", "host",
    ...dirs.flatMap((d) => ["-v", `${d}:${d}`]),
    ...Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
    image, "haproxy",
  ];
  return {
    version: () => docker(["run", "--rm", image, "haproxy", "-v"]).split("\n")[0],
    check: (cfg) => void docker([...args(`${namePrefix}-check-${randomBytes(4).toString("hex")}`, {}), "-c", "-q", "-f", cfg]),
    start: (cfg, env) => {
      const name = `${namePrefix}-haproxy-${randomBytes(4).toString("hex")}`;
      const child = start("docker", [...args(name, env), "-db", "-f", cfg]);
      return {
        ...child,
        stop: async () => {
          await child.stop();
          // The CLI passes the signal on; should the container outlive it, it goes too.
          try {
            docker(["rm", "-f", name]);
          } catch {}
        },
      };
    },
  };
}
