/** A JavaScript value as a Lua literal, for the tables the generated Lua files start with. */
export const luaLiteral = (v: unknown): string => {
  if (Array.isArray(v)) return `{ ${v.map(luaLiteral).join(", ")} }`;
  if (v && typeof v === "object") return `{ ${Object.entries(v).map(([k, x]) => `[${JSON.stringify(k)}] = ${luaLiteral(x)}`).join(", ")} }`;
  return typeof v === "string" ? JSON.stringify(v) : String(v);
};
