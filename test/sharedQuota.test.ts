/** How replicas' quota counts sit in the counter store (pure), and the keeper's --store argument. */
import { describe, expect, it } from "vitest";
import { checkStoreUrl } from "../usage/counterStore.js";
import { parseKeeperArgs } from "../usage/keeperMain.js";
import { mapLines } from "../usage/quotaSeed.js";
import { othersFrom, ownFields, periodHashes } from "../usage/sharedQuota.js";
import { parseRates, sumRates } from "../usage/sharedRate.js";

const ME = "00112233aabbccdd";
const OTHER = "ffeeddcc99887766";

describe("the counter store's layout", () => {
  it("a hash per UTC day and month, the day's kept 3 days and the month's 41", () => {
    expect(periodHashes(new Date("2026-11-30T23:59:59Z"))).toEqual([
      { key: "rpcstack:quota:2026-11-30", period: "2026-11-30", ttl: 259_200 },
      { key: "rpcstack:quota:2026-11", period: "2026-11", ttl: 3_542_400 },
    ]);
  });

  it("publishes this ledger's totals of the period only, as `<ledger> <name>` fields", () => {
    const totals = new Map([["alice/2026-11-29", 7], ["alice/2026-11", 30], ["badge:web/2026-11-29", 2]]);
    expect(ownFields(ME, totals, "2026-11-29")).toEqual({ [`${ME} alice`]: "7", [`${ME} badge:web`]: "2" });
    expect(ownFields(ME, totals, "2026-11")).toEqual({ [`${ME} alice`]: "30" });
  });

  it("reads the other ledgers' counts summed by name, never its own, and skips fields that are not counts", () => {
    const hash = { [`${ME} alice`]: "7", [`${OTHER} alice`]: "5", [`aaaaaaaaaaaaaaaa alice`]: "1", [`${OTHER} bob`]: "3", "junk": "9", [`${OTHER} carol`]: "-4", [`${OTHER} dave`]: "1e9" };
    expect(othersFrom(hash, "2026-11-29", ME)).toEqual(new Map([["alice/2026-11-29", 6], ["bob/2026-11-29", 3]]));
  });

  it("quota_used.map sums the process's seed and the others' counts per period", () => {
    expect(mapLines(Object.entries({ "alice/2026-11-29": 4 }), new Map([["alice/2026-11-29", 6], ["bob/2026-11", 3], ["zed/2026-11", 0]]))).toBe("alice/2026-11-29 10\nbob/2026-11 3\n");
  });
});

describe("rates across replicas", () => {
  it("reads each key name's calls in the window from show table st_keys: requests plus a batch's further calls", () => {
    const text = [
      "# table: st_keys, type: string, size:102400, used:3",
      "0x55e173755218: key=alice use=0 exp=29987 shard=0 http_req_rate(10000)=2 gpc0_rate(10000)=5",
      "0x55e173755219: key=badge:web use=1 exp=29987 shard=0 http_req_rate(10000)=4 gpc0_rate(10000)=0",
      "0x55e17375521a: key=idle use=0 exp=100 shard=0 http_req_rate(10000)=0 gpc0_rate(10000)=0",
      "# table: st_ws, type: string, size:102400, used:1",
      "0x55e17375521b: key=alice use=1 exp=3599000 shard=0 conn_cur=1",
      "",
    ].join("\n");
    expect(parseRates(text)).toEqual(new Map([["alice", 7], ["badge:web", 4]]));
  });
  it("sums the other replicas' hashes by name, skipping values that are not counts", () => {
    expect(sumRates([{ alice: "7", bob: "1" }, { alice: "3", bob: "x", carol: "-2" }])).toEqual(new Map([["alice", 10], ["bob", 1]]));
  });
});

describe("rpcstack-usage --store", () => {
  const base = ["--admin", "127.0.0.1:1", "--file", "/tmp/usage.json", "--listen", "127.0.0.1:0"];
  it("takes a redis:// URL with --quota-used-map", () => {
    expect(parseKeeperArgs([...base, "--quota-used-map", "/q.map", "--store", "redis://counters:6379"])).toMatchObject({ storeUrl: "redis://counters:6379", quotaUsedMap: "/q.map" });
  });
  it.each([
    [["--store", "redis://counters:6379"], /--store goes with --quota-used-map/],
    [["--quota-used-map", "/q.map", "--store", "http://counters:6379"], /--store: is a http:\/\/ URL, not a redis:\/\/ or rediss:\/\/ one/],
    [["--quota-used-map", "/q.map", "--store", "counters:6379"], /--store: is a counters:\/\/ URL, not a redis:\/\/ or rediss:\/\/ one/],
    [["--quota-used-map", "/q.map", "--rate-others-map", "/r.map"], /--rate-others-map goes with --store/],
  ])("refuses %j", (extra, why) => {
    expect(() => parseKeeperArgs([...base, ...extra])).toThrow(why);
  });
  it("a URL without a host is refused, and no message repeats a URL (it may hold the store's password)", () => {
    expect(checkStoreUrl("redis://")).toMatch(/names no host|is not a URL/);
    expect(checkStoreUrl("http://:s3cret@counters:6379")).not.toContain("s3cret");
    expect(checkStoreUrl("not a url s3cret")).not.toContain("s3cret");
  });
});
