/** README and the pages of docs/: every link resolves, every page is reachable, README stays one screen. */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import GithubSlugger from "github-slugger";
import { marked, type Token } from "marked";
import { describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";

const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

const tokensOf = (file: string): Token[] => marked.lexer(readFileSync(join(ROOT, file), "utf8"));

/** The anchors GitHub gives a page's headings. */
function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  marked.walkTokens(tokensOf(file), (t) => {
    if (t.type === "heading") out.add(slugger.slug(t.text.replace(/`/g, "")));
  });
  return out;
}

/** Every link and image target of a page, in tables and lists too. */
function targetsOf(file: string): string[] {
  const out: string[] = [];
  marked.walkTokens(tokensOf(file), (t) => {
    if (t.type === "link" || t.type === "image") out.push(t.href);
  });
  return out;
}

/** Why a link from `file` does not resolve, or undefined when it does. */
function brokenLink(file: string, href: string): string | undefined {
  if (/^(https?:|mailto:)/.test(href)) return URL.canParse(href) ? undefined : "is not a URL";
  const [path, anchor] = href.split("#", 2);
  const target = path ? relative(ROOT, resolve(dirname(join(ROOT, file)), decodeURI(path))) : file;
  if (!existsSync(join(ROOT, target))) return `${target} does not exist`;
  if (anchor === undefined) return undefined;
  if (!target.endsWith(".md")) return `an anchor into ${target}, which is not a page`;
  return anchorsOf(target).has(anchor) ? undefined : `${target} has no heading #${anchor}`;
}

describe("the documentation", () => {
  it.each(PAGES)("%s: every link and image resolves to a file of the repository and an existing heading", (file) => {
    const broken = targetsOf(file).flatMap((href) => {
      const why = brokenLink(file, href);
      return why ? [`${href}: ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it("README links every page of docs/", () => {
    const linked = new Set(targetsOf("README.md").map((h) => h.split("#")[0]));
    expect(PAGES.filter((p) => p.startsWith("docs/") && !linked.has(p))).toEqual([]);
  });

  it("README fits one screen of reading: under 150 lines", () => {
    expect(readFileSync(join(ROOT, "README.md"), "utf8").split("\n").length).toBeLessThan(150);
  });

  it("the link check finds what is broken", () => {
    expect(brokenLink("README.md", "docs/none.md")).toBe("docs/none.md does not exist");
    expect(brokenLink("README.md", "docs/sizing.md#no-such-heading")).toBe("docs/sizing.md has no heading #no-such-heading");
    expect(brokenLink("docs/cache.md", "#seeing-it-work")).toBeUndefined();
    expect(brokenLink("docs/benchmark.md", "../bench/results/latest.svg")).toBeUndefined();
  });
});
