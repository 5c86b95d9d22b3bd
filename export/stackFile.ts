/** Reads a stack file's `rpcstack:` entries the way the Pulumi engine hands them to a program. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

export const encodeConfigValue = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));

export interface StackFileEntries {
  readonly entries: Record<string, string>;
  /** Keys holding encrypted (`secure:`) values, which only the Pulumi CLI can decrypt. */
  readonly encrypted: readonly string[];
}

export function readStackFile(root: string, stack: string): StackFileEntries {
  return readStackFilePath(join(root, "stacks", `Pulumi.${stack}.yaml`));
}

/** A stack file anywhere (an operator's copy with other images or keys set). */
export function readStackFilePath(path: string): StackFileEntries {
  const doc = parse(readFileSync(path, "utf8")) ?? {};
  const entries: Record<string, string> = {};
  const encrypted: string[] = [];
  for (const [k, v] of Object.entries<unknown>(doc.config ?? {})) {
    if (typeof v === "object" && v !== null && "secure" in v) encrypted.push(k);
    else entries[k] = encodeConfigValue(v);
  }
  return { entries, encrypted };
}
