/** The ledger's totals over all days as Prometheus text (exposition format 0.0.4). */
import { addCounters, type LedgerState } from "./ledger.js";
import { ZERO, parseEntryId, type Counters } from "./table.js";

const METRICS: readonly { readonly name: string; readonly counter: keyof Counters; readonly help: string }[] = [
  { name: "rpcstack_usage_calls_total", counter: "calls", help: "Calls through the gateway per key name: each JSON-RPC call (also inside a batch or a WebSocket message), REST or gRPC request." },
  { name: "rpcstack_usage_errors_total", counter: "errors", help: "Answers with status 400 or more other than 429 (a JSON-RPC error inside a 200 answer is not counted)." },
  { name: "rpcstack_usage_limited_total", counter: "limited", help: "Calls refused for rate or quota (429)." },
  { name: "rpcstack_usage_cache_hits_total", counter: "cacheHits", help: "Calls answered from the gateway's cache." },
  { name: "rpcstack_usage_requests_total", counter: "requests", help: "HTTP requests (a WebSocket upgrade counts one)." },
  { name: "rpcstack_usage_bytes_out_total", counter: "bytesOut", help: "Bytes sent to clients." },
];

/** A label value as the exposition format quotes it. */
export const labelValue = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/** Counts over every day of the ledger, per entry id. */
export function totals(state: LedgerState): Map<string, Counters> {
  const out = new Map<string, Counters>();
  for (const entries of Object.values(state.days)) for (const [id, c] of Object.entries(entries)) out.set(id, addCounters(out.get(id) ?? ZERO, c));
  return out;
}

export function usageMetrics(state: LedgerState): string {
  const rows = [...totals(state)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines: string[] = [];
  for (const m of METRICS) {
    lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} counter`);
    for (const [id, c] of rows) {
      const e = parseEntryId(id);
      if (!e) continue;
      lines.push(`${m.name}{key="${labelValue(e.key)}",chain="${labelValue(e.chain)}",interface="${labelValue(e.iface)}"} ${c[m.counter]}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
