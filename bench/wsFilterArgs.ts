/** The command line of bench/wsFilter.ts, checked before anything starts. Pure. */
import { parseArgs } from "node:util";

/** The cases every run can have; --lua adds its own. */
export const WS_FILTER_CASES = ["policy", "tunnel", "noop-both", "noop-req", "native-both"] as const;

export const WS_FILTER_USAGE = `usage: npx tsx bench/wsFilter.ts [--rounds N] [--seconds S] [--connections N] [--cases a,b] [--lua NAME=DIR ...]
HAProxy's CPU per WebSocket round trip with the gateway's message policy, against the same HAProxy
relaying the messages unread (issue 38), one HAProxy per case, the cases taking turns in slices.
  --rounds N         slices per case (20)
  --seconds S        length of a slice (2)
  --connections N    WebSockets per case, open the whole run (32)
  --cases a,b        only these cases (tunnel, the reference, always runs): ${WS_FILTER_CASES.filter((c) => c !== "tunnel").join(", ")} or a --lua NAME
  --lua NAME=DIR     one more case: the generated config with the Lua programs of DIR (repeatable)
  --help             this text`;

export interface WsFilterArgs {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly lua: readonly { readonly name: string; readonly dir: string }[];
  /** Only these cases (plus tunnel); undefined: all. */
  readonly cases?: readonly string[];
}

const positive = (name: string, v: string, integer: boolean): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) throw new Error(`--${name} must be a positive ${integer ? "integer" : "number"} (got "${v}")`);
  return n;
};

export function parseWsFilterArgs(argv: readonly string[]): WsFilterArgs | "help" | { readonly error: string } {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        rounds: { type: "string", default: "20" },
        seconds: { type: "string", default: "2" },
        connections: { type: "string", default: "32" },
        lua: { type: "string", multiple: true, default: [] },
        cases: { type: "string" },
        help: { type: "boolean" },
      },
    });
    if (values.help) return "help";
    const lua = (values.lua as string[]).map((spec) => {
      const m = /^([A-Za-z0-9_-]+)=(.+)$/.exec(spec);
      if (!m) throw new Error(`--lua must be NAME=DIR, NAME of letters, digits, - and _ (got "${spec}")`);
      if ((WS_FILTER_CASES as readonly string[]).includes(m[1])) throw new Error(`--lua ${m[1]}: that name is one of the built-in cases (${WS_FILTER_CASES.join(", ")})`);
      return { name: m[1], dir: m[2] };
    });
    const names = new Set(lua.map((l) => l.name));
    if (names.size !== lua.length) throw new Error("--lua: each NAME may be given once");
    const known = [...WS_FILTER_CASES, ...names];
    const cases = values.cases?.split(",");
    const unknown = cases?.filter((c) => !known.includes(c));
    if (unknown?.length) throw new Error(`--cases: unknown case ${unknown.map((c) => `"${c}"`).join(", ")} (known: ${known.join(", ")})`);
    return {
      rounds: positive("rounds", values.rounds!, true),
      seconds: positive("seconds", values.seconds!, false),
      connections: positive("connections", values.connections!, true),
      lua,
      ...(cases ? { cases } : {}),
    };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
