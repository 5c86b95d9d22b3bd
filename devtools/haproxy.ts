/**
 * The gateway's HAProxy on this machine: the release production pins, unpacked by
 * scripts/haproxy/build.sh into a cache outside the checkout. The tests, the bench and the
 * end-to-end gateway image all run this one binary, never the machine's own `haproxy`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
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

/**
 * The account the official haproxy image makes for HAProxy (docker-library/haproxy's Dockerfile:
 * `groupadd --gid 99 --system haproxy`, `useradd --uid 99 … haproxy`), which the gateway's `user`
 * and `group` lines name. The end-to-end image (devtools/images/debian.Dockerfile) makes the same.
 */
export const HAPROXY_IMAGE_ACCOUNT = { name: "haproxy", uid: 99, gid: 99, home: "/var/lib/haproxy" } as const;

/** nss_wrapper (Debian package libnss-wrapper): gives one program passwd and group files of its own. */
const NSS_WRAPPER = "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so";

/**
 * The environment under which HAProxy resolves users and groups from the image's own passwd and
 * group files (written into `dir`) rather than the host's: `haproxy -c` on a container's
 * configuration then checks its `user` and `group` lines as the container resolves them, on a host
 * with no such account. Throws, naming the package, where nss_wrapper is missing.
 */
export function imageAccounts(dir: string): Record<string, string> {
  if (!existsSync(NSS_WRAPPER)) {
    throw new Error(`${NSS_WRAPPER} is missing: checking a gateway container's configuration resolves its user and group as the image does, through nss_wrapper (Debian package libnss-wrapper; bash .ci/run installs it)`);
  }
  const a = HAPROXY_IMAGE_ACCOUNT;
  const passwd = join(dir, "image-passwd");
  const group = join(dir, "image-group");
  writeFileSync(passwd, `root:x:0:0:root:/root:/bin/sh\n${a.name}:x:${a.uid}:${a.gid}::${a.home}:/usr/sbin/nologin\n`);
  writeFileSync(group, `root:x:0:\n${a.name}:x:${a.gid}:\n`);
  return { LD_PRELOAD: NSS_WRAPPER, NSS_WRAPPER_PASSWD: passwd, NSS_WRAPPER_GROUP: group };
}
