/**
 * Images for the one-node cluster without a registry: an OCI image layout archive of a directory
 * tree (for `ctr images import`), and a busybox root file system from the host's Debian binaries.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const sh = (cmd: string, args: readonly string[]) => execFileSync(cmd, args, { encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], maxBuffer: 64 << 20 });

/** The OCI image config (image-spec config.md), the fields used here. */
export interface OciImageConfig {
  architecture: "amd64";
  os: "linux";
  config: { Entrypoint?: string[]; Cmd?: string[]; Env?: string[] };
  rootfs: { type: "layers"; diff_ids: string[] };
}
interface OciDescriptor { mediaType: string; digest: string; size: number; annotations?: Record<string, string>; platform?: { architecture: string; os: string } }

/**
 * An OCI image layout archive (image-spec image-layout.md) of one layer, the tree at `rootfs`,
 * named `ref` for `ctr images import`. The layer is reproducible: sorted, root-owned, mtime 0.
 */
export function ociArchive(ref: string, rootfs: string, config: OciImageConfig["config"], work: string): string {
  const layout = join(work, "layout");
  mkdirSync(join(layout, "blobs/sha256"), { recursive: true });
  const blob = (data: Buffer, mediaType: string): OciDescriptor => {
    const digest = createHash("sha256").update(data).digest("hex");
    writeFileSync(join(layout, "blobs/sha256", digest), data);
    return { mediaType, digest: `sha256:${digest}`, size: data.length };
  };
  const layer = blob(execFileSync("tar", ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-C", rootfs, "-c", "."], { maxBuffer: 256 << 20 }), "application/vnd.oci.image.layer.v1.tar");
  const image: OciImageConfig = { architecture: "amd64", os: "linux", config, rootfs: { type: "layers", diff_ids: [layer.digest] } };
  const configBlob = blob(Buffer.from(JSON.stringify(image)), "application/vnd.oci.image.config.v1+json");
  const manifest = blob(Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json", config: configBlob, layers: [layer] })), "application/vnd.oci.image.manifest.v1+json");
  const index = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [{ ...manifest, platform: { architecture: "amd64", os: "linux" }, annotations: { "io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref.split(":").pop()! } }],
  };
  writeFileSync(join(layout, "index.json"), JSON.stringify(index));
  writeFileSync(join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  const archive = `${work}.tar`;
  execFileSync("tar", ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "-C", layout, "-cf", archive, "oci-layout", "index.json", "blobs"]);
  rmSync(work, { recursive: true, force: true });
  return archive;
}

/**
 * A root file system with Debian's busybox and glibc's getent, the shared libraries `ldd` names for
 * them and a link per applet under /bin, made in `into`; also what the tests give `docker import`.
 */
export function busyboxRootfs(into: string): string {
  const busybox = "/bin/busybox";
  mkdirSync(join(into, "bin"), { recursive: true });
  for (const program of [busybox, "/usr/bin/getent"]) {
    copyFileSync(program, join(into, "bin", program.split("/").pop()!));
    for (const line of sh("ldd", [program]).split("\n")) {
      // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
      const lib = /=>\s*(\/\S+)/.exec(line)?.[1] ?? /^\s*(\/\S+)/.exec(line)?.[1];
      if (!lib || existsSync(join(into, lib))) continue;
      mkdirSync(join(into, dirname(lib)), { recursive: true });
      copyFileSync(lib, join(into, lib));
    }
  }
  for (const applet of sh(busybox, ["--list"]).split("\n").filter(Boolean)) {
    if (applet !== "busybox" && !existsSync(join(into, "bin", applet))) symlinkSync("busybox", join(into, "bin", applet));
  }
  for (const d of ["tmp", "etc", "proc", "sys", "dev"]) mkdirSync(join(into, d), { recursive: true });
  return into;
}
