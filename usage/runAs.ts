/**
 * The keeper's switch from root to the user it runs as. It starts as root because Docker creates
 * a named volume root-owned and ledgers kept before this switch belong to root: the ledger's folder,
 * the ledger and its temporary files are handed to that user first, so nothing kept is lost, and
 * then the process gives up root for good (as HAProxy does beside it).
 */
import { chownSync, lchownSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { systemReason } from "../kit/errors.js";
import { isLedgerTemp } from "./store.js";

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

/** The ledger and the temporary files saveLedger (usage/store.ts) writes beside it. */
export const ledgerOwnFile = (ledger: string, entry: string) => entry === ledger || isLedgerTemp(ledger, entry);

/**
 * Hands the ledger's folder and the ledger's files to `who`, then runs as `who`; nothing to do when
 * already `who`. The folder must be the ledger's own (a volume of its own): one that holds anything
 * else (`--file /var/lib/usage.json`) is refused rather than given away.
 */
const FILE_SYSTEM_OWN = "lost+found";

export function runAs(file: string, who: RunAs): void {
  if (process.getuid!() === who.uid && process.getgid!() === who.gid) return;
  if (process.getuid!() !== 0) throw new Error(`cannot run as ${who.uid}:${who.gid}: started as uid ${process.getuid!()}, and only root may change user`);
  const ledger = basename(file);
  let dir: string;
  let entries: string[];
  try {
    // The folder as it is, not a link to it: the link's owner would change, and the folder not.
    dir = realpathSync(dirname(file));
    entries = readdirSync(dir);
  } catch (e) {
    throw new Error(`cannot read the ledger's folder ${dirname(file)}: ${systemReason(e)}`);
  }
  // A claim formatted ext4 (a cloud disk on a cluster) has lost+found at its root: the file
  // system's, left to root.
  const own = entries.filter((e) => e !== FILE_SYSTEM_OWN);
  const others = own.filter((e) => !ledgerOwnFile(ledger, e));
  if (others.length) {
    throw new Error(`--run-as: the ledger's folder ${dir} holds ${others.slice(0, 3).map((o) => `"${o}"`).join(", ")}${others.length > 3 ? ` and ${others.length - 3} more` : ""}, not the ledger's: give --file a folder of its own, as the stack's volume is`);
  }
  try {
    // lchown: a link in the folder is handed over itself, never what it points to.
    for (const entry of own) lchownSync(join(dir, entry), who.uid, who.gid);
    chownSync(dir, who.uid, who.gid);
    process.setgroups!([who.gid]);
    process.setgid!(who.gid);
    process.setuid!(who.uid);
  } catch (e) {
    throw new Error(`cannot hand ${dir} to ${who.uid}:${who.gid} and run as it: ${systemReason(e)}`);
  }
}
