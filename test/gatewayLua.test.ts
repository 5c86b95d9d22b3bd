/** The gateway's Lua programs as files of the package (gateway/lua/). */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { LUA_FILES, LUA_SOURCE_DIR } from "../gateway/lua.js";
import { ROOT } from "./harness.js";

const luaFilesIn = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".lua"))
    .map((e) => relative(dir, join(e.parentPath, e.name)));

describe("the gateway's Lua files", () => {
  it("LUA_FILES names every .lua file of gateway/lua/, so none is left out of the container or the compose export", () => {
    expect([...LUA_FILES].sort()).toEqual(luaFilesIn(join(ROOT, LUA_SOURCE_DIR)).sort());
  });
});
