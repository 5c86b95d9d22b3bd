/** Why a system call failed, in words a user of the package's programs reads instead of an errno. */

const WORDS: Readonly<Record<string, string>> = {
  ENOENT: "no such file or folder",
  EISDIR: "is a folder, not a file",
  ENOTDIR: "a part of the path is not a folder",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EEXIST: "a file is in the way",
  EADDRINUSE: "the port is in use",
  EADDRNOTAVAIL: "no such address on this machine",
  ENOTFOUND: "not an address or a name this machine resolves",
  EAI_AGAIN: "not an address or a name this machine resolves",
};

/** The reason of a failed file or socket operation; the error's own message for other errors. */
export function systemReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const words = code ? WORDS[code] : undefined;
  if (!words) return (e as Error).message;
  // Binding a port below 1024 takes root: say so where it is the likely cause.
  return code === "EACCES" && (e as NodeJS.ErrnoException).syscall === "listen" ? `${words} (ports below 1024 need root)` : words;
}
