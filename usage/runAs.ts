/**
 * The keeper's switch from root to the user it runs as. It starts as root because Docker creates
 * a named volume root-owned and ledgers kept before this switch belong to root: the ledger's folder
 * and what is in it are handed to that user first, so nothing kept is lost, and then the process
 * gives up root for good (as HAProxy does beside it).
 */
import { lchownSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { systemReason } from "../cli/errors.js";

export interface RunAs {
  readonly uid: number;
  readonly gid: number;
}

/** `UID:GID`, neither of them 0 (root would keep root). Throws an Error naming the problem. */
export function parseRunAs(v: string): RunAs {
  const m = /^(\d{1,10}):(\d{1,10})$/.exec(v);
  const [uid, gid] = m ? [Number(m[1]), Number(m[2])] : [NaN, NaN];
  if (!m || uid > 2 ** 31 - 1 || gid > 2 ** 31 - 1) throw new Error(`--run-as must be UID:GID, two numbers (got "${v}")`);
  if (uid === 0 || gid === 0) throw new Error(`--run-as ${v}: that is root; give the user and group to run as instead`);
  return { uid, gid };
}

/** Hands `dir` and its entries to `who`, then runs as `who`; nothing to do when already `who`. */
export function runAs(dir: string, who: RunAs): void {
  if (process.getuid!() === who.uid && process.getgid!() === who.gid) return;
  if (process.getuid!() !== 0) throw new Error(`cannot run as ${who.uid}:${who.gid}: started as uid ${process.getuid!()}, and only root may change user`);
  try {
    // lchown: a link in the folder is handed over itself, never what it points to.
    for (const entry of readdirSync(dir)) lchownSync(join(dir, entry), who.uid, who.gid);
    lchownSync(dir, who.uid, who.gid);
    process.setgroups!([who.gid]);
    process.setgid!(who.gid);
    process.setuid!(who.uid);
  } catch (e) {
    throw new Error(`cannot hand ${dir} to ${who.uid}:${who.gid} and run as it: ${systemReason(e)}`);
  }
}
