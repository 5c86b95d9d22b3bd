/** Writes a gateway build's files (key map, Lua data, error pages) where its configuration expects them. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { LUA_SOURCE_DIR } from "../gateway/lua.js";
import type { GatewayBuild } from "../gateway/types.js";

/** The package's Lua programs where they are in this checkout: the `luaDir` for HAProxy run outside a container. */
export const PACKAGE_LUA_DIR = join(__dirname, "..", LUA_SOURCE_DIR);

export function writeGatewayFiles(filesDir: string, build: GatewayBuild): void {
  for (const [name, text] of Object.entries(build.files)) {
    mkdirSync(dirname(join(filesDir, name)), { recursive: true });
    writeFileSync(join(filesDir, name), text);
  }
}
