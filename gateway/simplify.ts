/**
 * Rules whose condition a named ACL that can never match decides, settled when the config is
 * written instead of on every request: a branch (between `or`s) that requires such an ACL goes,
 * a `!` of it is always true and goes from its branch, and a rule left with no branch is not
 * written (`!name` and `! name` alike). Pure. HAProxy evaluates every rule of a frontend on every request, so each rule that
 * cannot apply still costs its evaluation (docs/benchmark.md).
 */
import type { Cond, Rule } from "./model.js";

/** A condition's `or` branches, each a list of terms (`name`, `!`, `{ ... }` as words). */
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

/** The branch with `!never` terms taken out, or undefined when it requires one of `never`. */
function settle(branch: readonly string[], never: ReadonlySet<string>): string[] | undefined {
  const out: string[] = [];
  let depth = 0;
  for (let i = 0; i < branch.length; i++) {
    const w = branch[i];
    if (w === "{") depth++;
    if (w === "}") depth--;
    // Inside `{ ... }` a word is a fetch or a pattern, never an ACL's name.
    if (depth === 0 && w === "!" && never.has(branch[i + 1])) {
      i++;
      continue;
    }
    if (depth === 0 && w.startsWith("!") && never.has(w.slice(1))) continue;
    if (depth === 0 && never.has(w) && branch[i - 1] !== "!") return undefined;
    out.push(w);
  }
  return out;
}

/** `rules` with the ACLs named in `never` (each defined once, as `always_false`) settled. */
export function settleNever(rules: readonly Rule[], never: readonly string[]): Rule[] {
  if (!never.length) return [...rules];
  const set = new Set(never);
  const out: Rule[] = [];
  for (const r of rules) {
    if (!r.cond?.length || !r.cond.some((w) => set.has(w.replace(/^!/, "")))) {
      out.push(r);
      continue;
    }
    const kept = branches(r.cond).map((b) => settle(b, set)).filter((b): b is string[] => b !== undefined);
    if (!kept.length) continue;
    // A branch left empty is always true: so is the whole condition.
    const cond = kept.some((b) => !b.length) ? undefined : kept.flatMap((b, i) => (i ? ["or", ...b] : b));
    out.push({ ...r, cond });
  }
  return out;
}
