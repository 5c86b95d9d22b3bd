/**
 * The merge bench's check of what clients saw (bench/staleness.ts): an answer is stale when an
 * answer that came before its call was sent had shown a newer head.
 */
import { describe, expect, it } from "vitest";
import { staleness } from "../bench/staleness.js";

describe("answers older than a head shown before they were asked", () => {
  it("counts an answer behind a head another client was shown before the call went out, and by how much", () => {
    const answers = [
      { sentAt: 0, answeredAt: 10, head: 5 },
      { sentAt: 11, answeredAt: 20, head: 7 },
      // Sent after head 7 was shown, answered 6: stale by one.
      { sentAt: 21, answeredAt: 30, head: 6 },
      // Sent before head 7 was shown (in flight together): answered 5 is not stale.
      { sentAt: 12, answeredAt: 25, head: 5 },
      // Sent after 7 was shown, far behind.
      { sentAt: 40, answeredAt: 41, head: 4 },
    ];
    expect(staleness(answers)).toEqual({ checked: 5, stale: 2, worstBehind: 3 });
  });

  it("finds nothing stale where every answer is at least the newest head shown before its call", () => {
    const answers = Array.from({ length: 50 }, (_, i) => ({ sentAt: i * 10, answeredAt: i * 10 + 15, head: Math.floor(i / 3) }));
    expect(staleness(answers)).toEqual({ checked: 50, stale: 0, worstBehind: 0 });
    expect(staleness([])).toEqual({ checked: 0, stale: 0, worstBehind: 0 });
  });

  it("an answer shown at the very moment a call is sent does not count as shown before it", () => {
    expect(staleness([{ sentAt: 0, answeredAt: 10, head: 9 }, { sentAt: 10, answeredAt: 12, head: 8 }]).stale).toBe(0);
  });
});
