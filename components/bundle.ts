/** Shipped TypeScript programs as one dependency-free file, for containers with only Node in them. */
import { buildSync } from "esbuild";
import { join } from "node:path";
import { PACKAGE_ROOT } from "./packageRoot.js";

const cache = new Map<string, string>();

export function bundleSource(source: string): string {
  let text = cache.get(source);
  if (text === undefined) {
    text = buildSync({
      entryPoints: [join(PACKAGE_ROOT, source)],
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node18",
      write: false,
      // Progress bars are for terminals; the containers have none and no node_modules.
      external: ["cli-progress", "bufferutil", "utf-8-validate"],
      legalComments: "none",
    }).outputFiles[0].text;
    cache.set(source, text);
  }
  return text;
}
