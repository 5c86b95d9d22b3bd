/**
 * Rules whose condition is decided by what is known when the config is written, settled then
 * instead of on every request: a branch (between `or`s) that requires a term known false (or the
 * negation of one known true) goes, a term known true (or the negation of one known false) goes
 * from its branch, and a rule left with no branch is not written. A term is a named ACL (`name`,
 * negated `!name` or `! name`) or an anonymous one (`{ ... }`, negated `! { ... }`), known by its
 * words joined with single spaces. Pure. HAProxy evaluates every rule of a frontend on every
 * request, so each rule that cannot apply still costs its evaluation (docs/benchmark.md).
 */
import type { Cond, Rule } from "./model.js";

/** A condition's `or` branches, each a list of words (`name`, `!`, `{ ... }` as words). */
function branches(cond: Cond): string[][] {
  const out: string[][] = [[]];
  let depth = 0;
  for (const w of cond) {
    if (w === "{") depth++;
    if (w === "}") depth--;
    if (depth === 0 && (w === "or" || w === "||")) out.push([]);
    else out[out.length - 1].push(w);
  }
  return out;
}

/** A branch's terms: each its words and whether it is negated. */
function terms(branch: readonly string[]): { words: string[]; key: string; negated: boolean }[] {
  const out: { words: string[]; key: string; negated: boolean }[] = [];
  for (let i = 0; i < branch.length; ) {
    const bang = branch[i] === "!";
    if (bang) i++;
    let words: string[];
    if (branch[i] === "{") {
      const end = branch.indexOf("}", i);
      words = branch.slice(i, end + 1);
      i = end + 1;
    } else words = [branch[i++]];
    const glued = !bang && words.length === 1 && words[0].startsWith("!");
    const key = glued ? words[0].slice(1) : words.join(" ");
    out.push({ words: bang ? ["!", ...words] : words, key, negated: bang || glued });
  }
  return out;
}

/** The branch with its known terms taken out, or undefined when a known term makes it false. */
function settleBranch(branch: readonly string[], known: ReadonlyMap<string, boolean>): string[] | undefined {
  const out: string[] = [];
  for (const t of terms(branch)) {
    const value = known.get(t.key);
    if (value === undefined) out.push(...t.words);
    else if (value === t.negated) return undefined;
  }
  return out;
}

/** `rules` with the terms in `known` (true or false for every request they reach) settled. */
export function settleKnown(rules: readonly Rule[], known: ReadonlyMap<string, boolean>): Rule[] {
  if (!known.size) return [...rules];
  const out: Rule[] = [];
  for (const r of rules) {
    if (!r.cond?.length) {
      out.push(r);
      continue;
    }
    const kept = branches(r.cond).map((b) => settleBranch(b, known)).filter((b): b is string[] => b !== undefined);
    if (!kept.length) continue;
    // A branch left empty is always true: so is the whole condition.
    const cond = kept.some((b) => !b.length) ? undefined : kept.flatMap((b, i) => (i ? ["or", ...b] : b));
    out.push(cond && cond.length === r.cond.length ? r : { ...r, cond });
  }
  return out;
}

/** `rules` with the ACLs named in `never` (each defined once, as `always_false`) settled. */
export const settleNever = (rules: readonly Rule[], never: readonly string[]): Rule[] => settleKnown(rules, new Map(never.map((n) => [n, false])));
