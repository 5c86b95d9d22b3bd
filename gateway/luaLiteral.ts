/**
 * A JavaScript value as a Lua literal: the one writer of the data the Lua programs read. Tables
 * of scalars stay on one line; a table holding tables puts each entry on a line of its own.
 */
export function luaLiteral(v: unknown, indent = ""): string {
  if (typeof v === "string") return luaString(v);
  if (typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) return String(v);
  if (!v || typeof v !== "object") throw new Error(`no Lua literal for ${String(v)}`);
  const inner = indent + "  ";
  // Absent fields are left out, as JSON.stringify does.
  const entries = Array.isArray(v)
    ? v.map((x) => ["", x] as const)
    : Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [`${luaKey(k)} = `, x] as const);
  if (!entries.length) return "{}";
  const items = entries.map(([k, x]) => k + luaLiteral(x, inner));
  return entries.some(([, x]) => x && typeof x === "object" && Object.keys(x).length) ? `{\n${items.map((i) => `${inner}${i},`).join("\n")}\n${indent}}` : `{ ${items.join(", ")} }`;
}

const LUA_KEYWORDS = new Set("and break do else elseif end false for function goto if in local nil not or repeat return then true until while".split(" "));
const luaKey = (k: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !LUA_KEYWORDS.has(k) ? k : `[${luaString(k)}]`);

/** A Lua string literal: JSON's `\uXXXX` is no Lua escape, so control characters are written `\ddd`. */
const luaString = (s: string): string => `"${s.replace(/[\\"\x00-\x1f\x7f]/g, (c) => (c === "\\" || c === '"' ? `\\${c}` : `\\${String(c.charCodeAt(0)).padStart(3, "0")}`))}"`;
