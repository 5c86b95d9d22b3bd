/**
 * A typed model of an HAProxy configuration and its one serializer. Builders produce sections
 * of directives as word lists, and frontend rules as data (action + condition); quoting, layout
 * and the order HAProxy evaluates rules in happen only here.
 */

/** One directive: its words, unquoted. */
export type Directive = readonly string[];

/** A condition: the words after `if` (`unless` is written as a negated condition). */
export type Cond = readonly string[];

/**
 * The rule kinds of a frontend, in the order HAProxy evaluates them. HAProxy runs every
 * `http-request` rule before any `use_backend`, whatever their order in the file, and warns
 * when the file disagrees: the serializer writes them in this order so the text reads as it runs.
 */
export const PHASES = ["tcp-request connection", "http-request", "http-response", "http-after-response", "use_backend", "default_backend"] as const;
export type Phase = (typeof PHASES)[number];

export interface Rule {
  readonly phase: Phase;
  /** The words after the phase keyword, e.g. ["return", "status", "401", ...] or a backend name. */
  readonly action: readonly string[];
  readonly cond?: Cond;
  /** Why the rule exists; written as a comment above it. */
  readonly why?: string;
}

export interface Section {
  /** e.g. ["frontend", "https"], ["global"]. */
  readonly header: readonly string[];
  readonly comment?: string;
  readonly directives: readonly (Directive | { readonly comment: string })[];
  /** Frontend and backend rules, written after the directives in PHASES order (stable). */
  readonly rules?: readonly Rule[];
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

const line = (words: readonly string[]) => `    ${words.map(quote).join(" ")}`;

function ruleLines(r: Rule): string[] {
  const words = [...r.phase.split(" "), ...r.action, ...(r.cond?.length ? ["if", ...r.cond] : [])];
  return [...(r.why ? r.why.split("\n").map((c) => `    # ${c}`) : []), line(words)];
}

export function orderRules(rules: readonly Rule[]): Rule[] {
  return PHASES.flatMap((p) => rules.filter((r) => r.phase === p));
}

export function serialize(cfg: HaproxyConfig): string {
  return cfg.sections
    .map((s) => {
      const lines = [
        ...(s.comment ? s.comment.split("\n").map((c) => `# ${c}`) : []),
        s.header.map(quote).join(" "),
        ...s.directives.map((d) => ("comment" in d ? `    # ${d.comment}` : line(d as Directive))),
        ...orderRules(s.rules ?? []).flatMap(ruleLines),
      ];
      return lines.join("\n");
    })
    .join("\n\n")
    .concat("\n");
}

/** `{ fetch -m str value }`-style anonymous ACL words. */
export const anon = (...words: string[]): string[] => ["{", ...words, "}"];

/** Rule constructors, so builders read as policy rather than word lists. */
export const req = (action: readonly string[], cond?: Cond, why?: string): Rule => ({ phase: "http-request", action, cond, why });
export const res = (action: readonly string[], cond?: Cond, why?: string): Rule => ({ phase: "http-response", action, cond, why });
export const afterResponse = (action: readonly string[], cond?: Cond, why?: string): Rule => ({ phase: "http-after-response", action, cond, why });
export const useBackend = (backend: string, cond: Cond): Rule => ({ phase: "use_backend", action: [backend], cond });
