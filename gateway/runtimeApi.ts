/**
 * HAProxy's runtime API (the `stats socket` at level admin): one command per connection, its
 * answer read whole once HAProxy closes the connection. Used to change the key map live and by
 * the usage keeper. Unlike the rest of gateway/, this module does I/O (a socket, the key map's
 * file): only programs that talk to a running gateway import it, never the config model.
 */
import { renameSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { keyMap, type ProjectKey } from "./build.js";
import { keyChanges, parseShowMap, type KeyChanges } from "./keySync.js";
import { systemReason } from "../kit/errors.js";

/** `host:port` for a TCP socket, anything else a Unix socket's path. */
export function runtimeCommand(socket: string, command: string, timeoutMs = 10_000): Promise<string> {
  const tcp = /^([^/]+):(\d+)$/.exec(socket);
  return new Promise((resolve, reject) => {
    const s = tcp ? connect(Number(tcp[2]), tcp[1]) : connect(socket);
    let out = "";
    s.setTimeout(timeoutMs, () => s.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    s.on("connect", () => s.end(`${command}\n`));
    s.on("data", (d) => (out += d));
    s.on("error", (e) => reject(new Error(`the runtime API at ${socket}: ${systemReason(e)}`)));
    s.on("close", (failed) => failed || resolve(out));
  });
}

export interface KeySync {
  /** The runtime API socket (path or host:port). */
  readonly socket: string;
  /** The key map's path as HAProxy names it (its configuration's `map(...)`). */
  readonly mapPath: string;
  /** Where that file is on this machine, when it is reachable: rewritten so a restart keeps the keys. */
  readonly mapFile?: string;
  readonly keys: readonly ProjectKey[];
}

/**
 * Makes the running gateway's key map hold exactly `keys`: the file first (written whole, then
 * renamed over the old one, so a restart reads either the old or the new map, never half of
 * one), then one runtime command per changed key. Throws naming the key's name, never the key.
 */
export async function applyKeys(o: KeySync): Promise<KeyChanges> {
  const shown = await runtimeCommand(o.socket, `show map ${o.mapPath}`);
  const live = parseShowMap(shown);
  if (live.size === 0 && shown.trim() !== "") throw new Error(`HAProxy has no map ${o.mapPath}: ${shown.trim().split("\n")[0]}`);
  const changes = keyChanges(o.mapPath, live, o.keys);
  if (o.mapFile) {
    const tmp = join(dirname(o.mapFile), `.keys.map.${process.pid}.tmp`);
    writeFileSync(tmp, keyMap(o.keys), { mode: 0o600 });
    renameSync(tmp, o.mapFile);
  }
  for (const command of changes.commands) {
    const answer = (await runtimeCommand(o.socket, command)).trim();
    // Success is an empty answer; `del` of a key already gone is what was wanted.
    if (answer && !(command.startsWith("del ") && answer === "Key not found.")) {
      const name = o.keys.find((k) => command.endsWith(` ${k.name}`))?.name ?? "a revoked key";
      throw new Error(`HAProxy refused the change of ${name} (${command.split(" ")[0]} map): ${answer}`);
    }
  }
  return changes;
}
