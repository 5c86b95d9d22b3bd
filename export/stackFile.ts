/** Reads a stack file's `rpcstack:` entries the way the Pulumi engine hands them to a program. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { systemReason } from "../kit/errors.js";

export const encodeConfigValue = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

export interface StackFileEntries {
  readonly entries: Record<string, string>;
  /** Keys holding encrypted (`secure:`) values, which only the Pulumi CLI can decrypt. */
  readonly encrypted: readonly string[];
}

/** A file that cannot be read as the command needs it; the message names the file and why. */
export class FileProblem extends Error {}

/** A text file named by a flag (`--keys-file`), or a FileProblem naming the flag, the path and why. */
export function readFlagFile(flag: string, path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new FileProblem(`${flag} ${path}: ${systemReason(e)}`);
  }
}

/** The stacks the package ships: the NAME of each stacks/Pulumi.NAME.yaml. */
export function stackNames(root: string): string[] {
  return readdirSync(join(root, "stacks"))
    .map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1])
    .filter((n): n is string => !!n)
    .sort();
}

export function readStackFile(root: string, stack: string): StackFileEntries {
  const names = stackNames(root);
  if (!names.includes(stack)) throw new FileProblem(`--stack ${stack}: no such stack; the stacks are ${names.join(", ")} (stacks/Pulumi.<name>.yaml), or give --stack-file PATH`);
  return readStackFilePath(join(root, "stacks", `Pulumi.${stack}.yaml`), "--stack");
}

/** A stack file anywhere (an operator's copy with other images or keys set). */
export function readStackFilePath(path: string, flag = "--stack-file"): StackFileEntries {
  const text = readFlagFile(flag, path);
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new FileProblem(`${flag} ${path}: not YAML (${(e as Error).message.split("\n")[0]})`);
  }
  const config = (doc as { config?: unknown } | null)?.config;
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new FileProblem(`${flag} ${path}: not a Pulumi stack file (it has no "config:" mapping of rpcstack: keys)`);
  }
  const entries: Record<string, string> = {};
  const encrypted: string[] = [];
  for (const [k, v] of Object.entries<unknown>(config as Record<string, unknown>)) {
    if (typeof v === "object" && v !== null && "secure" in v) encrypted.push(k);
    else entries[k] = encodeConfigValue(v);
  }
  return { entries, encrypted };
}
