/** How the package's modules depend on one another. */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";

/** A folder's modules and, for each, the modules of the same folder it imports (types included). */
function importsWithin(dir: string): Map<string, string[]> {
  const names = readdirSync(join(ROOT, dir)).filter((f) => f.endsWith(".ts")).map((f) => f.replace(/\.ts$/, ""));
  return new Map(names.map((n) => [n, ts.preProcessFile(readFileSync(join(ROOT, dir, `${n}.ts`), "utf8")).importedFiles
    .map((f) => /^\.\/([^/]+)\.js$/.exec(f.fileName)?.[1])
    .filter((m): m is string => !!m && names.includes(m))]));
}

/**
 * The package's folders that a folder's modules (those of its subfolders too) import, types
 * included: each relative import resolved to the top-level folder it lands in.
 */
function foldersImportedBy(dir: string): string[] {
  const files = readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  const found = new Set<string>();
  for (const f of files) {
    const file = join(ROOT, dir, f);
    for (const { fileName } of ts.preProcessFile(readFileSync(file, "utf8")).importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const parts = relative(ROOT, resolve(dirname(file), fileName)).split(sep);
      // A module at the root (index.ts) is no folder; one below the root is in parts[0].
      if (parts.length > 1 && parts[0] !== dir && parts[0] !== "..") found.add(parts[0]);
    }
  }
  return [...found].sort();
}

/** A cycle in the graph, as the modules along it, or undefined. */
function cycleIn(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === "done") return undefined;
    if (state.get(n) === "open") return [...path.slice(path.indexOf(n)), n];
    state.set(n, "open");
    path.push(n);
    for (const m of graph.get(n) ?? []) {
      const found = visit(m);
      if (found) return found;
    }
    path.pop();
    state.set(n, "done");
    return undefined;
  };
  for (const n of graph.keys()) {
    const found = visit(n);
    if (found) return found;
  }
  return undefined;
}

describe("module structure", () => {
  it.each(["gateway", "config", "plan", "services", "monitoring"])("the modules of %s/ import one another one way only (no cycle, type imports included)", (dir) => {
    expect(cycleIn(importsWithin(dir))).toBeUndefined();
  });

  // Shared helpers live below what uses them: a folder never imports one that imports it back.
  const FOLDERS = ["usage", "cli", "readiness", "restore", "kit", "volumes", "gateway", "services", "plan", "config", "monitoring", "kubernetes"];

  it(`the folders ${FOLDERS.join(", ")} import one another one way only (no cycle, type imports included)`, () => {
    expect(cycleIn(new Map(FOLDERS.map((d) => [d, foldersImportedBy(d)])))).toBeUndefined();
  });

  it.each(["kit", "volumes"])("%s/, what programs share, imports no other folder of the package", (dir) => {
    expect(foldersImportedBy(dir)).toEqual([]);
  });

  it("finds a cycle where there is one", () => {
    expect(cycleIn(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", []]]))).toEqual(["a", "b", "c", "a"]);
  });
});
