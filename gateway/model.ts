/**
 * A typed model of an HAProxy configuration and its one serializer. Builders produce sections
 * of directives as word lists; quoting and layout happen only here.
 */

/** One directive: its words, unquoted. */
export type Directive = readonly string[];

export interface Section {
  /** e.g. ["frontend", "https"], ["global"]. */
  readonly header: readonly string[];
  readonly comment?: string;
  readonly directives: readonly (Directive | { readonly comment: string })[];
}

export interface HaproxyConfig {
  readonly sections: readonly Section[];
}

/** Words that need no quotes: HAProxy splits on blanks and treats quotes, `#` and `\` specially. */
const BARE = /^[^\s"'#\\]+$/;

export function quote(word: string): string {
  if (word.length && BARE.test(word)) return word;
  // Single quotes take everything literally but cannot hold a single quote.
  if (!word.includes("'")) return `'${word}'`;
  return `"${word.replace(/[\\"$]/g, (c) => `\\${c}`)}"`;
}

export function serialize(cfg: HaproxyConfig): string {
  return cfg.sections
    .map((s) => {
      const lines = [
        ...(s.comment ? s.comment.split("\n").map((c) => `# ${c}`) : []),
        s.header.map(quote).join(" "),
        ...s.directives.map((d) => ("comment" in d ? `    # ${d.comment}` : `    ${(d as Directive).map(quote).join(" ")}`)),
      ];
      return lines.join("\n");
    })
    .join("\n\n")
    .concat("\n");
}

/** `{ fetch -m str value }`-style anonymous ACL words. */
export const anon = (...words: string[]): string[] => ["{", ...words, "}"];
