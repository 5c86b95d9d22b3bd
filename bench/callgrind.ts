/** valgrind's callgrind as the bench runs it (bench/instructions.ts): the command, and what a dump counted. Pure. */
import { join } from "node:path";

/** The command a program runs under, its dumps written into `work` as `cg-<name>.<pid>.<n>`. */
export const callgrindCommand = (work: string, name: string): string[] => ["valgrind", "--tool=callgrind", `--callgrind-out-file=${join(work, `cg-${name}`)}.%p`];

/** The instructions a callgrind dump counted: its `summary:` line (`totals:` in older dumps). */
export function callgrindTotal(dump: string): number {
  const m = /^(?:summary|totals):\s+(\d+)\s*$/m.exec(dump);
  if (!m) throw new Error("the callgrind dump has no summary line");
  return Number(m[1]);
}
