/** What a Docker test file holds where no engine answers. */
import { describe, expect, it } from "vitest";

/**
 * One test whose name says NOT RUN and why: it fails where CI is set, and passes with a warning on
 * a developer's machine, so a run without an engine never reads as a passed end-to-end test.
 */
export function describeNotRun(what: string, missing: string): void {
  describe(`${what} on a real Docker engine`, () => {
    it(`NOT RUN: ${missing}; bash .ci/run starts dockerd, or start one and run npm test again`, () => {
      console.warn(`\n*** ${what} NOT RUN: ${missing} ***\n`);
      expect(process.env.CI, `CI must run the ${what}, but ${missing}`).toBeFalsy();
    });
  });
}
