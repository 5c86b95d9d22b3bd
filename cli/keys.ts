/**
 * `npm run keys -- add|revoke|rename|list`: project keys changed in one step, in the place that
 * holds them (the stack's Pulumi config, or a keys file for compose deployments) and, with
 * --socket, in the running gateway through its runtime API: no reload, no container replaced.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { projectKeyProblems } from "../config/gatewayRules.js";
import { configSchema } from "../config/schema.js";
import { keyDigest, type ProjectKey } from "../gateway/build.js";
import { GATEWAY_PATHS } from "../services/gateway.js";
import { systemReason } from "../kit/errors.js";
import { applyKeys, runtimeCommand } from "../gateway/runtimeApi.js";
import { parseShowMap } from "../gateway/keySync.js";

export const USAGE = `usage: npm run keys -- <command> (--stack NAME | --keys-file PATH) [options]
commands:
  add NAME [--key KEY]   a new key for NAME (without --key: 32 random bytes, base64url, printed
                         once on standard output and nowhere else)
  revoke NAME            the key of NAME stops at once: its next call gets 401, its open
                         WebSockets are closed with 1008 "project key revoked"
  rename NAME NEW        the same key, counted and logged under NEW from now on
  list                   the names (never the keys); with --socket, whether each is live
where the keys are:
  --stack NAME           the stack's projectKeys, read with \`pulumi config get\` and written with
                         \`pulumi config set --secret\` (the value on standard input, never in argv)
  --keys-file PATH       a JSON file like projectKeys ([{"name":"team","key":"..."}]), rewritten
                         whole with mode 0600 (the file npm run export --keys-file reads)
the running gateway (leave out to change only the keys' home; \`pulumi up\` converges later):
  --socket S             its runtime API: a Unix socket path or HOST:PORT
  --map PATH             the key map as HAProxy names it (default ${GATEWAY_PATHS.keyMap}, the stack's)
  --map-file PATH        that file on this machine, rewritten too so that a restart keeps the change
  --up                   with --stack: then \`pulumi up --yes\`, which runs the key sync (the only
                         container a key change replaces)
  --help                 this text`;

class UsageError extends Error {}

interface Store {
  read(): ProjectKey[];
  write(keys: readonly ProjectKey[]): void;
}

function fileStore(path: string): Store {
  return {
    read: () => {
      let text;
      try {
        text = readFileSync(path, "utf8");
      } catch (e) {
        throw new Error(`cannot read --keys-file ${path}: ${systemReason(e)}`);
      }
      try {
        return JSON.parse(text);
      } catch {
        throw new Error(`--keys-file ${path} is not JSON (expected [{"name":"...","key":"..."}])`);
      }
    },
    write: (keys) => {
      const tmp = join(dirname(path), `.keys.${process.pid}.tmp`);
      writeFileSync(tmp, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
      renameSync(tmp, path);
    },
  };
}

function pulumiStore(stack: string): Store {
  const run = (args: string[], input?: string) => execFileSync("pulumi", [...args, "--stack", stack], { encoding: "utf8", input, stdio: ["pipe", "pipe", "pipe"] });
  const failed = (what: string, e: unknown) => new Error(`pulumi config ${what} projectKeys --stack ${stack} failed: ${String((e as { stderr?: string }).stderr ?? systemReason(e)).trim()}`);
  return {
    read: () => {
      let text;
      try {
        text = run(["config", "get", "projectKeys"]);
      } catch (e) {
        throw failed("get", e);
      }
      try {
        return JSON.parse(text);
      } catch {
        // JSON.parse's own message quotes the text: the keys.
        throw new Error(`projectKeys of stack ${stack} is not JSON (expected [{"name":"...","key":"..."}])`);
      }
    },
    write: (keys) => {
      try {
        run(["config", "set", "--secret", "projectKeys"], JSON.stringify(keys));
      } catch (e) {
        throw failed("set", e);
      }
    },
  };
}

// The config schema's own patterns: a name goes into runtime API commands, so nothing else may pass.
const FIELDS = configSchema.properties.projectKeys.items.properties;
function checkEntry(k: ProjectKey) {
  if (!new RegExp(FIELDS.name.pattern).test(k.name)) throw new UsageError(`the name ${JSON.stringify(k.name).slice(0, 80)} ${FIELDS.name["x-hint"]}`);
  if (!new RegExp(FIELDS.key.pattern).test(k.key)) throw new UsageError(`the key of ${k.name} ${FIELDS.key["x-hint"]}`);
}

/** The new list for a command, or a UsageError naming what is wrong (a name, never a key). */
export function changedKeys(keys: readonly ProjectKey[], command: string, args: readonly string[], key?: string): ProjectKey[] {
  const [name, next] = args;
  const has = (n: string) => keys.some((k) => k.name === n);
  const want = (n: number) => {
    if (args.length !== n) throw new UsageError(`${command} takes ${n === 1 ? "a name" : "a name and the new name"} (got ${args.length} argument${args.length === 1 ? "" : "s"})`);
  };
  switch (command) {
    case "add":
      want(1);
      if (has(name)) throw new UsageError(`add ${name}: that name already has a key (revoke it first, or pick another name)`);
      return [...keys, { name, key: key ?? randomBytes(32).toString("base64url") }];
    case "revoke":
      want(1);
      if (!has(name)) throw new UsageError(`revoke ${name}: no key has that name`);
      return keys.filter((k) => k.name !== name);
    case "rename":
      want(2);
      if (!has(name)) throw new UsageError(`rename ${name}: no key has that name`);
      if (has(next)) throw new UsageError(`rename ${name} ${next}: ${next} already has a key`);
      return keys.map((k) => (k.name === name ? { ...k, name: next } : k));
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

type RunningMap = { socket: string; mapPath: string; mapFile?: string };

/** Puts the running gateway back as `saved` says; what happened, to be said. */
const restoreSaved = (at: RunningMap, saved: ProjectKey[]): Promise<string> =>
  applyKeys({ ...at, keys: saved }).then(
    () => "the running gateway is back as the saved keys say",
    (r: Error) => `putting the running gateway back failed too (${r.message}): run the command again, or pulumi up`,
  );

/** Applies `next` to the running gateway; when that fails, puts `saved` back there and says so. */
async function applyOrRestore(at: RunningMap, saved: ProjectKey[], next: ProjectKey[], change: string) {
  try {
    return await applyKeys({ ...at, keys: next });
  } catch (e) {
    throw new Error(`${change}: not saved, the gateway did not take it (${(e as Error).message}); ${await restoreSaved(at, saved)}`);
  }
}

export async function runKeys(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        stack: { type: "string" }, "keys-file": { type: "string" }, key: { type: "string" },
        socket: { type: "string" }, map: { type: "string" }, "map-file": { type: "string" }, up: { type: "boolean" }, help: { type: "boolean" },
      },
    });
  } catch (e) {
    const unknown = /Unknown option '([^']+)'/.exec((e as Error).message);
    console.error(`rpcstack keys: ${unknown ? `unknown option ${unknown[1]}` : (e as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values: v, positionals: [command, ...args] } = parsed;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    if (!command) throw new UsageError("give a command: add, revoke, rename or list");
    if (!["add", "revoke", "rename", "list"].includes(command)) throw new UsageError(`unknown command ${command} (add, revoke, rename or list)`);
    if (!v.stack === !v["keys-file"]) throw new UsageError("give one of --stack or --keys-file");
    if (v.key !== undefined && command !== "add") throw new UsageError("--key goes with add only");
    if (v["map-file"] !== undefined && !v.socket) throw new UsageError("--map-file goes with --socket");
    if (v.up && !v.stack) throw new UsageError("--up goes with --stack");
    const store = v.stack ? pulumiStore(v.stack) : fileStore(v["keys-file"]!);
    const mapPath = v.map ?? GATEWAY_PATHS.keyMap;
    const keys = store.read();
    if (!Array.isArray(keys)) throw new Error(`the keys are not a list (expected [{"name":"...","key":"..."}])`);
    if (command === "list") {
      const live = v.socket ? parseShowMap(await runtimeCommand(v.socket, `show map ${mapPath}`)) : undefined;
      for (const k of keys) console.log(live ? `${k.name}\t${live.get(keyDigest(k.key))?.includes(k.name) ? "live" : "not live"}` : k.name);
      const known = new Set(keys.map((k) => keyDigest(k.key)));
      for (const [digest, names] of live ?? []) if (!known.has(digest)) console.log(`${names[0]}\tlive, but not in the configuration (its digest begins ${digest.slice(0, 8)})`);
      return 0;
    }
    const next = changedKeys(keys, command, args, v.key);
    next.forEach(checkEntry);
    const problems = projectKeyProblems({ projectKeys: next } as unknown as Parameters<typeof projectKeyProblems>[0]);
    if (problems.length) throw new UsageError(problems.join("; "));
    // With a running gateway, the keys' home changes only once the gateway has taken the change:
    // the two never disagree. A change HAProxy refused half-way is undone there.
    const at: RunningMap | undefined = v.socket ? { socket: v.socket, mapPath, mapFile: v["map-file"] } : undefined;
    const applied = at ? await applyOrRestore(at, keys, next, `${command} ${args.join(" ")}`) : undefined;
    try {
      store.write(next);
    } catch (e) {
      if (!at) throw e;
      // The gateway took a change its keys' home could not keep: it goes back, or a revoked key would return at the next key sync.
      throw new Error(`${command} ${args.join(" ")}: the gateway took it but saving failed (${(e as Error).message}); ${await restoreSaved(at, keys)}`);
    }
    // Printed as soon as it is saved: whatever fails next, the key exists and its owner needs it.
    if (command === "add" && v.key === undefined) console.log(next[next.length - 1].key);
    if (applied) {
      console.error(`the running gateway: ${[...applied.added.map((n) => `added ${n}`), ...applied.revoked.map((n) => `revoked ${n}`), ...applied.renamed.map((n) => `renamed ${n}`)].join(", ") || "already up to date"}`);
    } else if (v.up) {
      try {
        execFileSync("pulumi", ["up", "--yes", "--stack", v.stack!], { stdio: ["ignore", "inherit", "inherit"] });
      } catch {
        throw new Error(`${command} ${args.join(" ")} is saved in the stack's config, but pulumi up failed (above): run it again`);
      }
    } else {
      console.error(`${command} ${args.join(" ")}: saved; run \`pulumi up\` (or give --up or --socket) to apply it to the running gateway`);
    }
    return 0;
  } catch (e) {
    console.error(`rpcstack keys: ${(e as Error).message}${e instanceof UsageError ? `\n${USAGE}` : ""}`);
    return e instanceof UsageError ? 2 : 1;
  }
}

if (require.main === module) void runKeys(process.argv.slice(2)).then((code) => (process.exitCode = code));
