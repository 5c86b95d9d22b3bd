/** What the usage keeper seeds a new HAProxy process's quotas with (pure): the ledger's calls per key name in the day and month. */
import { expect, it } from "vitest";
import { mapLines, quotaTotals } from "../usage/quotaSeed.js";

/** A new process's seed as the keeper sends it: the ledger's calls of the day and month. */
const quotaSeeds = (state: Parameters<typeof quotaTotals>[0], at: Date) => mapLines(quotaTotals(state, at));
import { ZERO } from "../usage/table.js";

const c = (calls: number) => ({ ...ZERO, calls, requests: calls });

it("sums a name's calls over chains and interfaces, for the day and for the month, and leaves other months and idle names out", () => {
  const state = {
    version: 1 as const,
    days: {
      "2026-10-31": { "alice/eth/http": c(1000) },
      "2026-11-02": { "alice/eth/http": c(7), "bob/eth/http": c(0) },
      "2026-11-27": { "alice/eth/http": c(5), "alice/strk/ws": c(3), "web/eth/http": c(2) },
    },
  };
  expect(quotaSeeds(state, new Date("2026-11-27T11:30:00Z")).split("\n").filter(Boolean).sort()).toEqual([
    "alice/2026-11 15",
    "alice/2026-11-27 8",
    "web/2026-11 2",
    "web/2026-11-27 2",
  ]);
  expect(quotaSeeds({ version: 1, days: {} }, new Date())).toBe("");
});
