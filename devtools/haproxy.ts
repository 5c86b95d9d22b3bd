/**
 * The gateway's HAProxy on this machine: the release production pins, unpacked by
 * scripts/haproxy/build.sh into a cache outside the checkout. The tests, the bench and the
 * end-to-end gateway image all run this one binary, never the machine's own `haproxy`.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

const SCRIPT = join(__dirname, "../scripts/haproxy/build.sh");

/** The binary's path, unpacking it first when the cache lacks it (seconds; `.ci/run` does it first). */
export function haproxyBinary(): string {
  const path = execFileSync("bash", [SCRIPT, "--print-path"], { encoding: "utf8" }).trim();
  if (!existsSync(path)) {
    try {
      execFileSync("bash", [SCRIPT], { stdio: "pipe", maxBuffer: 16 << 20 });
    } catch (e) {
      throw new Error(`scripts/haproxy/build.sh failed: ${String((e as { stdout?: unknown }).stdout ?? e)}`);
    }
  }
  return path;
}

/** The first line of `haproxy -v`: the release that runs. */
export const haproxyVersion = () => execFileSync(haproxyBinary(), ["-v"], { encoding: "utf8" }).split("\n")[0];

/**
 * How a gateway on loopback is started here: in the foreground (-db), and without SO_REUSEPORT
 * (-dR). HAProxy sets SO_REUSEPORT by default, so two test gateways given the same free port both
 * bound it and the kernel split one test's connections between them; without it the second fails to
 * bind ("cannot bind socket"), and the test support starts it again on other ports.
 */
export const HAPROXY_LOOPBACK_FLAGS = ["-db", "-dR"] as const;
