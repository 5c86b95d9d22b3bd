/**
 * The ledger on its volume, as JSON. Written whole to a temporary file beside it, flushed, renamed
 * over the old one and the folder flushed: after a crash or power loss the file is the old ledger
 * or the new one, never half of one. A file that cannot be read stops the keeper instead of being
 * replaced by an empty ledger: that would lose every count it holds.
 */
import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { systemReason } from "../kit/errors.js";
import { EMPTY_LEDGER, type LedgerState } from "./ledger.js";
import { COUNTER_NAMES, parseEntryId, type Counters } from "./table.js";

export class LedgerFileError extends Error {}

/** A ledger's id (LedgerState.id): what newLedgerId makes. */
export const LEDGER_ID = /^[0-9a-f]{16}$/;

const isCounters = (c: unknown): c is Counters =>
  typeof c === "object" && c !== null && COUNTER_NAMES.every((n) => Number.isSafeInteger((c as Record<string, unknown>)[n]) && ((c as Record<string, number>)[n] ?? -1) >= 0);

const isEntries = (e: unknown): e is Record<string, Counters> =>
  typeof e === "object" && e !== null && !Array.isArray(e) && Object.entries(e).every(([id, c]) => parseEntryId(id) && isCounters(c));

/** Why `v` is not a ledger, or undefined when it is one. */
function ledgerProblem(v: unknown): string | undefined {
  const s = v as Partial<LedgerState> | null;
  if (typeof s !== "object" || s === null || s.version !== 1) return "not a usage ledger of version 1";
  if (typeof s.days !== "object" || s.days === null) return "no days";
  for (const [day, entries] of Object.entries(s.days)) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !isEntries(entries)) return `day ${JSON.stringify(day)} is not a day of counts`;
  }
  if (s.last !== undefined) {
    const p = s.last?.process as unknown as Record<string, unknown> | undefined;
    if (!p || !["pid", "startTimeSec", "cumReq"].every((k) => Number.isSafeInteger(p[k])) || !isEntries(s.last.entries)) return "its last reading is not one";
  }
  if (s.id !== undefined && (typeof s.id !== "string" || !LEDGER_ID.test(s.id))) return "named by an id that is not one";
  if (s.seed !== undefined && (typeof s.seed !== "object" || s.seed === null || !Object.values(s.seed).every((n) => Number.isSafeInteger(n) && n >= 0))) return "holding a quota seed that is not one";
  return undefined;
}

/** The ledger in `file`; an empty one when there is no file yet. Throws LedgerFileError naming the file otherwise. */
export function loadLedger(file: string): LedgerState {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return EMPTY_LEDGER;
    throw new LedgerFileError(`cannot read the usage ledger ${file}: ${systemReason(e)}`);
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new LedgerFileError(`the usage ledger ${file} is not JSON (${(e as Error).message}); it is left as it is: repair or move it away`);
  }
  const problem = ledgerProblem(v);
  if (problem) throw new LedgerFileError(`the usage ledger ${file} is ${problem}; it is left as it is: repair or move it away`);
  return v as LedgerState;
}

function fsyncPath(path: string, flags: string): void {
  const fd = openSync(path, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `state` to `file` (mode 0600) so that the file is always either the old or the new ledger. */
/** The temporary file saveLedger writes beside the ledger `name` before renaming it over. */
const tempName = (name: string, pid: number) => `.${name}.${pid}.tmp`;
/** Whether `entry` is one of the ledger `name`'s temporary files (of any process). */
export const isLedgerTemp = (name: string, entry: string) => entry.startsWith(`.${name}.`) && /^\d+\.tmp$/.test(entry.slice(name.length + 2));

export function saveLedger(file: string, state: LedgerState): void {
  const tmp = join(dirname(file), tempName(basename(file), process.pid));
  let created = false;
  try {
    const fd = openSync(tmp, "w", 0o600);
    created = true;
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, `${JSON.stringify(state)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    fsyncPath(dirname(file), "r");
  } catch (e) {
    if (created) rmSync(tmp, { force: true });
    throw new LedgerFileError(`cannot write the usage ledger ${file}: ${systemReason(e)}`);
  }
}
