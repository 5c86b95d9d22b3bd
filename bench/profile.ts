/** Where a process's CPU goes, from `perf report`: samples grouped by the library they fall in. Pure. */
import { fig } from "./figures.js";

/** Where perf samples fall: a library by its file name, else HAProxy or the kernel. */
export function sampleGroup(dso: string): string {
  if (/libssl|libcrypto/.test(dso)) return "TLS and crypto (libssl, libcrypto)";
  if (/liblua/.test(dso)) return "Lua (liblua)";
  if (/haproxy/.test(dso)) return "HAProxy (rules, HTTP, scheduler, its Lua glue)";
  if (/libc[.-]|libm[.-]|ld-linux/.test(dso)) return "C library (malloc, memcpy)";
  if (/kernel/.test(dso)) return "kernel (syscalls, TCP)";
  return "other";
}

/** `perf report --sort dso,symbol` lines (`12.34%  haproxy  [.] acl_exec_cond`): shares by group and the hottest symbols. */
export function perfShares(report: string): { groups: Record<string, number>; top: { share: number; dso: string; symbol: string }[] } {
  // The symbol is one word; some perf releases print more columns after it.
  const rows = [...report.matchAll(/^\s+([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(\S+)/gm)].map((m) => ({ share: Number(m[1]), dso: m[2], symbol: m[3] }));
  const groups: Record<string, number> = {};
  for (const r of rows) groups[sampleGroup(r.dso)] = fig((groups[sampleGroup(r.dso)] ?? 0) + r.share);
  return { groups, top: rows.slice(0, 10) };
}
