/** Writes a gateway build's files (key map, Lua policy, error pages) where its configuration expects them. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { GatewayBuild } from "../gateway/types.js";

export function writeGatewayFiles(filesDir: string, build: GatewayBuild): void {
  for (const [name, text] of Object.entries(build.files)) {
    mkdirSync(dirname(join(filesDir, name)), { recursive: true });
    writeFileSync(join(filesDir, name), text);
  }
}
