/** Guards for raw config values: the rules run even where the schema refused a value, so each checks the type it expects. */
export const isStr = (v: unknown): v is string => typeof v === "string";
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
