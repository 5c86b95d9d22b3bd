/**
 * The usage table between the gateway and the usage keeper (gateway/usageContract.ts): for every
 * stack, the table the generated haproxy.cfg writes is the one the keeper reads, entry by entry.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config/index.js";
import { readStackFile } from "../export/stackFile.js";
import { INTERFACES } from "../gateway/types.js";
import { planStack } from "../plan/index.js";
import { parseReading, parseShowTable } from "../usage/table.js";
import { ROOT } from "./harness.js";

const configOf = (stack: string) => planStack(loadConfig({ entries: readStackFile(ROOT, stack).entries, withoutSecrets: true })).gatewayConfig.compiled.config;

/** The entry each path interface's requests are tracked under, as haproxy.cfg writes it. */
function entryFormats(cfg: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of cfg.matchAll(/http-request set-var-fmt\(txn\.usage\) (\S+) if .*\{ var\(txn\.iface\) -m str (\S+) \}/g)) out.set(m[2], m[1]);
  return out;
}

/** One `show table` line for an entry, with every counter the table stores (as HAProxy 3.2 prints them). */
function storedLine(cfg: string, id: string): string {
  const store = /^backend st_usage\n\s+stick-table .* store (\S+)$/m.exec(cfg)![1];
  const names = store.split(",").flatMap((s) => {
    const gpc = /^gpc\((\d+)\)$/.exec(s);
    return gpc ? Array.from({ length: Number(gpc[1]) }, (_, i) => `gpc${i}`) : [s];
  });
  return `0x55ba10262250: key=${id} use=0 exp=86399818 shard=0 ${names.map((n, i) => `${n}=${i + 1}`).join(" ")}`;
}

describe("the usage table", () => {
  for (const stack of ["local", "testnet", "mainnet"]) {
    it(`${stack}: every path interface is tracked under an entry the keeper reads, with all its counters`, () => {
      const cfg = configOf(stack);
      const formats = entryFormats(cfg);
      expect([...formats.keys()].sort()).toEqual([...INTERFACES].sort());
      expect(cfg).toMatch(/http-request track-sc4 var\(txn\.usage\) table st_usage /);
      const lines = [...formats.values()].map((f) => storedLine(cfg, f.replace("%[var(txn.keyname)]", "team.b").replace("%[var(txn.chain)]", "eth")));
      const read = parseShowTable(`# table: st_usage, type: string, size:102400, used:${lines.length}\n${lines.join("\n")}\n\n`);
      expect(read.problems).toEqual([]);
      expect(read.rows.map((r) => `${r.key}/${r.chain}/${r.iface}`).sort()).toEqual(["team.b/eth/http", "team.b/eth/rest", "team.b/eth/ws"]);
      // Each counter read from its own stored name: none missing, none read twice.
      expect(new Set(Object.values(read.rows[0].counters)).size).toBe(6);
    });
  }

  it("gRPC (a Cosmos public hostname, which carries no key) is not counted per key: the keeper refuses a grpc entry", () => {
    const cfg = configOf("mainnet");
    expect(cfg).toContain("be_cosmoshub_host_grpc");
    expect([...entryFormats(cfg).values()].some((f) => f.endsWith("/grpc"))).toBe(false);
    const read = parseShowTable(`# table: st_usage, type: string, size:10, used:1\n${storedLine(cfg, "team/cosmoshub/grpc")}\n\n`);
    expect(read.rows).toEqual([]);
    expect(read.problems).toEqual(["entry 0x55ba10262250: its key is not <keyname>/<chain>/<interface>"]);
  });

  it("the keeper's one reading names the gateway's table", () => {
    const info = "Name: HAProxy\nPid: 8\nCumReq: 1\nStart_time_sec: 1\n\n";
    const cfg = configOf("local");
    expect(parseReading(`${info}# table: st_usage, type: string, size:10, used:1\n${storedLine(cfg, "a/eth/http")}\n\n`).rows).toHaveLength(1);
  });
});
