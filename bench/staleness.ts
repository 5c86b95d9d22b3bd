/**
 * The merge's rule, checked on what clients saw: no answer shows a head older than one an answer
 * had already shown (to any client) before its call was sent. Pure: the bench records the answers.
 */

export interface HeadAnswer {
  /** When the call was sent and its answer came, on one clock (ms). */
  readonly sentAt: number;
  readonly answeredAt: number;
  /** The head the answer showed. */
  readonly head: number;
}

export interface Staleness {
  readonly checked: number;
  /** Answers older than a head shown before their call was sent. */
  readonly stale: number;
  /** The most blocks such an answer was behind (0 when none was). */
  readonly worstBehind: number;
}

export function staleness(answers: readonly HeadAnswer[]): Staleness {
  const shown = [...answers].sort((a, b) => a.answeredAt - b.answeredAt);
  // The newest head shown up to each answer, in the order they came.
  const newest: number[] = [];
  shown.forEach((a, i) => newest.push(Math.max(a.head, i ? newest[i - 1] : -Infinity)));
  /** The newest head any answer had shown strictly before `t`. */
  const before = (t: number) => {
    let lo = 0;
    let hi = shown.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (shown[mid].answeredAt < t) lo = mid + 1;
      else hi = mid;
    }
    return lo ? newest[lo - 1] : -Infinity;
  };
  let stale = 0;
  let worstBehind = 0;
  for (const a of answers) {
    const behind = before(a.sentAt) - a.head;
    if (behind > 0) {
      stale++;
      worstBehind = Math.max(worstBehind, behind);
    }
  }
  return { checked: answers.length, stale, worstBehind };
}
