/**
 * What HAProxy's runtime API says about usage: `show info` (which process answers) and
 * `show table st_usage` (the gateway's counters per key name, chain and interface).
 */
import { COUNTER_NAMES, USAGE_STORED, USAGE_TABLE, parseEntryId, type UsageCounter, type UsageInterface } from "../gateway/usageContract.js";

export { COUNTER_NAMES, USAGE_TABLE, entryId, parseEntryId } from "../gateway/usageContract.js";
export type Interface = UsageInterface;

/** The counters the gateway keeps per entry (gateway/usageContract.ts), named as the ledger and its readers name them. */
export type Counters = { readonly [K in UsageCounter]: number };
export const ZERO: Counters = { calls: 0, errors: 0, limited: 0, cacheHits: 0, requests: 0, bytesOut: 0 };

export interface TableRow {
  /** A project key's name (never the key). */
  readonly key: string;
  readonly chain: string;
  readonly iface: Interface;
  readonly counters: Counters;
}

export interface ParsedTable {
  readonly rows: readonly TableRow[];
  /** Entries that could not be read, each with why: reported, never thrown. */
  readonly problems: readonly string[];
}

/** `show table` escapes spaces (and backslashes) in a key; ours have none, but a stray one must not split the line wrongly. */
function fields(line: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of line.matchAll(/([A-Za-z_][A-Za-z0-9_()]*)=((?:\\.|[^\s\\])*)/g)) out.set(m[1], m[2].replace(/\\(.)/g, "$1"));
  return out;
}

/** The entry lines of `table` in `show table` answers (which may hold several tables): headers, blank lines and other tables' lines left out. */
function* tableLines(text: string, table: string): Generator<string> {
  let inTable = false;
  for (const line of text.split("\n")) {
    const header = /^# table: ([^,]+),/.exec(line);
    if (header) inTable = header[1] === table;
    else if (inTable && /^0x[0-9a-f]+: /.test(line)) yield line;
  }
}

/** Each entry of `table` as its `name=value` fields (`key`, `http_req_rate(10000)`, `gpc0`, ...). */
export const tableEntries = (text: string, table: string): Map<string, string>[] => [...tableLines(text, table)].map(fields);

/**
 * The rows of `show table <name>`. Lines of other tables, headers and blank lines are ignored;
 * an entry whose key is not ours or whose counters are missing is listed in `problems`.
 */
export function parseShowTable(text: string, table = USAGE_TABLE): ParsedTable {
  const rows: TableRow[] = [];
  const problems: string[] = [];
  for (const line of tableLines(text, table)) {
    const f = fields(line);
    const id = f.get("key") ?? "";
    const where = parseEntryId(id);
    if (!where) {
      // Its text is not shown: a key that is not a name might be a secret put there by mistake.
      problems.push(`entry ${line.slice(0, line.indexOf(":"))}: its key is not <keyname>/<chain>/<interface>`);
      continue;
    }
    const values: Partial<Record<keyof Counters, number>> = {};
    const missing: string[] = [];
    for (const name of COUNTER_NAMES) {
      const raw = f.get(USAGE_STORED[name]);
      const n = raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : NaN;
      if (Number.isSafeInteger(n)) values[name] = n;
      else missing.push(USAGE_STORED[name]);
    }
    if (missing.length) problems.push(`entry ${id}: no readable ${missing.join(", ")}`);
    else rows.push({ ...where, counters: values as Counters });
  }
  return { rows, problems };
}

/** Which HAProxy process answered: a restart (new process) starts every counter again at 0. */
export interface ProcessIdentity {
  readonly pid: number;
  /** When the process started, in seconds since the epoch (`Start_time_sec`). */
  readonly startTimeSec: number;
  /** Requests since it started (`CumReq`): never lower within one process. */
  readonly cumReq: number;
}

/** The process in `show info`'s answer, undefined when the answer is not one. */
export function parseShowInfo(text: string): ProcessIdentity | undefined {
  const info = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.startsWith("# table:")) break;
    const m = /^([A-Za-z_][A-Za-z0-9_ -]*): (.*)$/.exec(line);
    if (m) info.set(m[1], m[2].trim());
  }
  const num = (k: string) => (/^\d+$/.test(info.get(k) ?? "") ? Number(info.get(k)) : NaN);
  const id = { pid: num("Pid"), startTimeSec: num("Start_time_sec"), cumReq: num("CumReq") };
  return info.get("Name") === "HAProxy" && Object.values(id).every(Number.isSafeInteger) ? id : undefined;
}

export interface Reading extends ParsedTable {
  readonly process: ProcessIdentity;
}

/** The one command that reads both, in one connection, so both answers come from the same process. */
export const READ_COMMAND = `show info; show table ${USAGE_TABLE}`;

/** READ_COMMAND's answer; throws when it is not HAProxy's info followed by the usage table. */
export function parseReading(text: string): Reading {
  const process = parseShowInfo(text);
  if (!process) throw new Error(`HAProxy's answer to "show info" is not one: ${JSON.stringify(text.trim().split("\n")[0] ?? "")}`);
  if (!text.includes(`# table: ${USAGE_TABLE},`)) {
    const said = text.split("\n\n").slice(1).join(" ").trim().split("\n")[0];
    throw new Error(`HAProxy has no table ${USAGE_TABLE}${said ? `: ${said}` : ""}`);
  }
  // A dump cut short would drop entries, and an entry missing once is counted whole when it is seen again.
  if (!text.endsWith("\n\n")) throw new Error(`HAProxy's answer ended before the table ${USAGE_TABLE} did`);
  return { process, ...parseShowTable(text) };
}
