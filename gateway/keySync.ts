/**
 * The key map changed live: what the runtime API must be told so that the running HAProxy's map
 * holds exactly the configured keys. Commands go one key at a time (add, del or set), so a key
 * that is not changed is never absent from the map, not even for a moment.
 * Pure: the caller sends the commands (runtimeApi.ts) and writes the map file.
 */
import { keyDigest } from "./build.js";
import type { ProjectKey } from "./types.js";

/** What the running map holds: digest -> the names it maps to (more than one only after a stray `add map`). */
export type LiveKeyMap = ReadonlyMap<string, readonly string[]>;

/** `show map <file>` output (`0x<ref> <digest> <name>` per line) as digests and names. */
export function parseShowMap(text: string): LiveKeyMap {
  const out = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const m = /^0x[0-9a-f]+ (\S+) (\S+)$/.exec(line.trim());
    if (!m) continue;
    out.set(m[1], [...(out.get(m[1]) ?? []), m[2]]);
  }
  return out;
}

export interface KeyChanges {
  /** Runtime API commands, in order. */
  readonly commands: readonly string[];
  readonly added: readonly string[];
  readonly revoked: readonly string[];
  /** Keys kept under another name: `old -> new`. */
  readonly renamed: readonly string[];
}

/**
 * The commands that turn `live` into `keys` on the map at `mapPath`. Added keys go first and
 * revoked ones last, so a key moved to a new value never leaves a gap. Names are reported, never
 * keys; a digest the configuration does not know is reported by its first 8 hex digits.
 */
export function keyChanges(mapPath: string, live: LiveKeyMap, keys: readonly ProjectKey[]): KeyChanges {
  const want = new Map(keys.map((k) => [keyDigest(k.key), k.name]));
  const adds: string[] = [], sets: string[] = [], dels: string[] = [];
  const added: string[] = [], revoked: string[] = [], renamed: string[] = [];
  for (const [digest, name] of want) {
    const now = live.get(digest);
    if (!now) {
      adds.push(`add map ${mapPath} ${digest} ${name}`);
      added.push(name);
    } else if (now.length !== 1 || now[0] !== name) {
      // `set map` changes every entry of the key at once: duplicates end with one value.
      sets.push(`set map ${mapPath} ${digest} ${name}`);
      if (now.some((n) => n !== name)) renamed.push(`${now.find((n) => n !== name)} -> ${name}`);
    }
  }
  for (const [digest, names] of live) {
    if (want.has(digest)) continue;
    dels.push(`del map ${mapPath} ${digest}`);
    revoked.push(names[0] ?? digest.slice(0, 8));
  }
  return { commands: [...adds, ...sets, ...dels], added, revoked, renamed };
}
