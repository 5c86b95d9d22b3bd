/**
 * The usage table, between the gateway that writes it (gateway/usage.ts) and the usage keeper that
 * reads it through HAProxy's runtime API (usage/table.ts): both take its name, counters, interfaces
 * and entry format from here, so neither can count or read something the other does not.
 * Pure data; usage/ may import gateway/, never the other way.
 */
import type { Interface as PathInterface } from "./types.js";

export const USAGE_TABLE = "st_usage";
/** Each key name's rate (sc0 on gateway paths): the keeper reads it too, to share rates between replicas (usage/sharedRate.ts). */
export const KEY_RATE_TABLE = "st_keys";

/**
 * The gateway path interfaces as usage names them. Public hostnames (Tendermint RPC, REST, gRPC)
 * carry no key, so nothing there is counted per key: gRPC is no usage interface.
 */
export const USAGE_INTERFACES = { "rpc-http": "http", rpc: "ws", rest: "rest" } as const satisfies Record<PathInterface, string>;
export type UsageInterface = (typeof USAGE_INTERFACES)[PathInterface];
export const USAGE_INTERFACE_NAMES = Object.values(USAGE_INTERFACES) as readonly UsageInterface[];

/** The gateway's own counters, by gpc index (docs/accounts.md#usage says what each counts). */
export const USAGE_GPC = {
  /** Calls let through the key's rate: a batch counts its calls, a WebSocket message its calls. */
  calls: 0,
  /** Answers 400 or more, other than 429. */
  errors: 1,
  /** 429 answers, and WebSockets closed for the rate. */
  limited: 2,
  /** Answers the response cache gave without the node. */
  cacheHits: 3,
} as const;

/** HAProxy's own counters the table stores beside them: HTTP requests (an upgrade counts one), bytes sent to the client. */
const HAPROXY_COUNTERS = { requests: "http_req_cnt", bytesOut: "bytes_out_cnt" } as const;

export type UsageCounter = keyof typeof USAGE_GPC | keyof typeof HAPROXY_COUNTERS;
export const COUNTER_NAMES = ["calls", "errors", "limited", "cacheHits", "requests", "bytesOut"] as const satisfies readonly UsageCounter[];

/** Each counter's data name in `show table`. */
export const USAGE_STORED: Readonly<Record<UsageCounter, string>> = {
  ...(Object.fromEntries(Object.entries(USAGE_GPC).map(([name, i]) => [name, `gpc${i}`])) as Record<keyof typeof USAGE_GPC, string>),
  ...HAPROXY_COUNTERS,
};

/** The stick table's `store` list: every counter above. */
export const USAGE_STORE = `${Object.values(HAPROXY_COUNTERS).join(",")},gpc(${Object.keys(USAGE_GPC).length})`;

/** An entry's key: `<keyname>/<chain>/<interface>`, a key's name and never the key. */
export const entryId = (r: { key: string; chain: string; iface: string }) => `${r.key}/${r.chain}/${r.iface}`;

// A key's name, or `badge:<projectId>` for a project's badges (gateway/badges.ts).
const ENTRY_KEY = new RegExp(String.raw`^((?:badge:)?[A-Za-z0-9_.-]{1,64})\/([a-z0-9-]+)\/(${USAGE_INTERFACE_NAMES.join("|")})$`);

export function parseEntryId(id: string): { key: string; chain: string; iface: UsageInterface } | undefined {
  const m = ENTRY_KEY.exec(id);
  return m ? { key: m[1], chain: m[2], iface: m[3] as UsageInterface } : undefined;
}
