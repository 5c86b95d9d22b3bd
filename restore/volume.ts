/**
 * The node's volume as the restore sees it: a database (anything but the staging folder), or empty;
 * the staging folder's verified mark; the verified stage moved into place, owned by the node's user.
 */
import { chown, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { volumeUse } from "../volumes/space.js";
import { RestoreFailure } from "./failure.js";
import { formatBytes } from "../volumes/restoreStatus.js";

export interface Owner {
  readonly uid: number;
  readonly gid: number;
}

/** ext4 makes it at the root of every file system: not a database. */
const IGNORED = new Set(["lost+found"]);
/** Written into the stage once it is verified: from then on, finishing the move is all that is left. */
const COMPLETE_MARK = "complete";

/** Inside the stage: the database as it is unpacked, before it moves to the volume's root. */
export function stagedDatabase(stage: string): string {
  return join(stage, "db");
}

/** What the volume holds, apart from what ext4 puts there. */
export async function volumeEntries(dest: string): Promise<string[]> {
  return (await readdir(dest)).filter((e) => !IGNORED.has(e));
}

/** Refused before downloading anything: a volume too small would fill halfway through. */
export async function checkFits(dest: string, needBytes: number): Promise<void> {
  const free = (await volumeUse(dest, dest)).availableBytes;
  if (free < needBytes) {
    throw new RestoreFailure(`does not fit: the restored database needs ${formatBytes(needBytes)} and the volume has ${formatBytes(free)} free; refused before downloading anything`);
  }
}

export async function markVerified(stage: string): Promise<void> {
  await writeFile(join(stage, COMPLETE_MARK), new Date().toISOString());
}

export async function isVerified(stage: string): Promise<boolean> {
  return readFile(join(stage, COMPLETE_MARK), "utf8").then(
    () => true,
    () => false,
  );
}

/** The verified stage becomes the database: entries move to the root (same file system: renames). */
export async function moveIntoPlace(dest: string, stage: string, owner: Owner | undefined): Promise<void> {
  const db = stagedDatabase(stage);
  for (const name of await readdir(db)) {
    await rename(join(db, name), join(dest, name));
    if (owner) await chownTree(join(dest, name), owner);
  }
  if (owner) await chown(dest, owner.uid, owner.gid);
  await rm(stage, { recursive: true, force: true });
}

async function chownTree(path: string, owner: Owner): Promise<void> {
  await chown(path, owner.uid, owner.gid);
  const children = await readdir(path, { withFileTypes: true }).catch(() => []);
  for (const c of children) await chownTree(join(path, c.name), owner);
}

/** The volume was empty before this restore: everything in it now is the restore's. */
export async function emptyVolume(dest: string): Promise<void> {
  for (const name of await readdir(dest)) if (!IGNORED.has(name)) await rm(join(dest, name), { recursive: true, force: true });
}
