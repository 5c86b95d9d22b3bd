/** Image references and the version-dependent flags that follow them. Pure. */

export interface ImageRef {
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

export function parseImageRef(ref: string): ImageRef {
  const at = ref.indexOf("@");
  const name = at >= 0 ? ref.slice(0, at) : ref;
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const slash = name.lastIndexOf("/");
  const colon = name.lastIndexOf(":");
  // A colon before the last slash is a registry port, not a tag.
  const hasTag = colon > slash;
  return {
    repository: hasTag ? name.slice(0, colon) : name,
    tag: hasTag ? name.slice(colon + 1) : undefined,
    digest,
  };
}

/** Why an image reference is not pinned, or undefined when it is. */
export function unpinnedReason(ref: string): string | undefined {
  const { tag, digest } = parseImageRef(ref);
  if (digest) return undefined;
  if (!tag) return "has no tag; pin a version tag or a digest";
  if (tag === "latest" || tag === "stable" || tag === "main" || tag === "master") {
    return `uses the moving tag "${tag}"; pin a version tag or a digest`;
  }
  return undefined;
}

export type Version = readonly [number, number, number];

const VERSION_PREFIX = /^v?(\d+)\.(\d+)(?:\.(\d+))?/;

/** The semantic version in an image tag (`v0.16.6`, `0.16.6-rc1`), or undefined. */
export function imageVersion(ref: string): Version | undefined {
  const m = VERSION_PREFIX.exec(parseImageRef(ref).tag ?? "");
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] : undefined;
}

/** A release written alone (`v0.17.0`, `1.17.5`), or undefined. */
export function parseVersion(s: string): Version | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)$/.exec(s);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function compareVersions(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

export const formatVersion = (v: Version) => `v${v.join(".")}`;
