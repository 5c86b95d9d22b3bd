/** How replicas' quota counts sit in the counter store (pure), and the keeper's --store argument. */
import { describe, expect, it } from "vitest";
import { checkStoreUrl } from "../usage/counterStore.js";
import { parseKeeperArgs } from "../usage/keeperMain.js";
import { mapLines } from "../usage/quotaSeed.js";
import { othersFrom, ownFields, periodHashes } from "../usage/sharedQuota.js";

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

describe("rpcstack-usage --store", () => {
  const base = ["--admin", "127.0.0.1:1", "--file", "/tmp/usage.json", "--listen", "127.0.0.1:0"];
  it("takes a redis:// URL with --quota-used-map", () => {
    expect(parseKeeperArgs([...base, "--quota-used-map", "/q.map", "--store", "redis://counters:6379"])).toMatchObject({ storeUrl: "redis://counters:6379", quotaUsedMap: "/q.map" });
  });
  it.each([
    [["--store", "redis://counters:6379"], /--store goes with --quota-used-map/],
    [["--quota-used-map", "/q.map", "--store", "http://counters:6379"], /--store: "http:\/\/counters:6379" is not a redis:\/\/ or rediss:\/\/ URL/],
    [["--quota-used-map", "/q.map", "--store", "counters:6379"], /--store: .* is not a redis:\/\/ or rediss:\/\/ URL|is not a URL/],
  ])("refuses %j", (extra, why) => {
    expect(() => parseKeeperArgs([...base, ...extra])).toThrow(why);
  });
  it("a URL without a host is refused", () => {
    expect(checkStoreUrl("redis://")).toMatch(/names no host|is not a URL/);
  });
});
