/** The configuration table (docs/configuration.md) against the schema: a key cannot be added, or removed, without its row. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { RawConfig, RawHost } from "../config/types.js";
import type { HistoryMode } from "../config/resources.js";
import { SECRET_KEYS, configDefaults, configKeys } from "../config/schema.js";
import { GATEWAY_LIMIT_DEFAULTS } from "../gateway/types.js";
import { ROOT } from "./harness.js";

/** The table under "## Keys" in docs/configuration.md: key -> the rest of its row. */
function tableRows(): Map<string, string> {
  const page = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
  const start = page.indexOf("\n## Keys\n");
  const section = start < 0 ? "" : page.slice(start, page.indexOf("\n## ", start + 1));
  const rows = [...section.matchAll(/^\| `([^`]+)` \|(.*)$/gm)];
  return new Map(rows.map((m) => [m[1], m[2]]));
}

// `a.b[].c` stands under `a.b[]` and `a.b`; `a.<path>.c` under `a.<path>`.
const ancestors = (key: string) => {
  const out: string[] = [];
  for (let i = 0; i < key.length; i++) if (key[i] === "." || key[i] === "[") out.push(key.slice(0, i));
  return out.concat(key.endsWith("[]") ? [key.slice(0, -2)] : []);
};

describe("the configuration table in docs/configuration.md", () => {
  const rows = tableRows();
  const keys = configKeys();

  it("is found and names keys", () => {
    expect(rows.size).toBeGreaterThan(20);
  });

  it("names only keys the schema has", () => {
    expect([...rows.keys()].filter((k) => !keys.includes(k))).toEqual([]);
  });

  it("documents every key of the schema, itself, inside a documented parent, or through its documented parts", () => {
    const documented = (k: string) => rows.has(k) || ancestors(k).some((a) => rows.has(a)) || [...rows.keys()].some((r) => ancestors(r).includes(k));
    expect(keys.filter((k) => !documented(k))).toEqual([]);
  });

  it("gives each default the schema holds, in its default column", () => {
    const defaults = Object.entries(configDefaults());
    expect(defaults.length).toBeGreaterThan(10);
    for (const [k, v] of defaults) expect(rows.get(k)?.split("|")[1], k).toContain(`\`${JSON.stringify(v).replace(/"([a-z0-9]+)"/g, "$1")}\``);
  });

  it("the gateway compiler's defaults for tests and the bench are the schema's", () => {
    const gateway = Object.fromEntries(Object.entries(configDefaults()).filter(([k]) => k.startsWith("gateway.")).map(([k, v]) => [k.slice("gateway.".length), v]));
    expect(gateway).toMatchObject(GATEWAY_LIMIT_DEFAULTS);
  });

  it("says which keys are secrets, as the schema marks them", () => {
    expect(SECRET_KEYS.length).toBeGreaterThan(0);
    for (const k of SECRET_KEYS) expect(rows.get(k), k).toMatch(/\bsecret\b/);
  });
});

describe("the config types, derived from the schema (json-schema-to-ts)", () => {
  it("name the schema's keys with its value types; .ci/run's typecheck fails when they drift", () => {
    expectTypeOf<RawConfig>().not.toBeUnknown();
    expectTypeOf<RawConfig["headroomMonths"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<NonNullable<RawConfig["l1"]>["history"]>().toEqualTypeOf<HistoryMode | undefined>();
    expectTypeOf<RawHost["kind"]>().toEqualTypeOf<"aws" | "ssh" | "local" | "kubernetes">();
    // The keys asserted above are the schema's own.
    expect(configKeys()).toEqual(expect.arrayContaining(["headroomMonths", "l1.history", "host.kind"]));
  });
});
