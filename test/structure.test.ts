/** How the package's modules depend on one another. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
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

  it("finds a cycle where there is one", () => {
    expect(cycleIn(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", []]]))).toEqual(["a", "b", "c", "a"]);
  });
});
