import { describe, expect, it } from "vitest";
import { CROWD_USAGE, parseCrowdArgs } from "../bench/crowdArgs.js";

describe("bench/crowd.ts's command line", () => {
  it("takes the defaults (the two tiers' thread counts, 64 addresses), and --help", () => {
    expect(parseCrowdArgs([])).toEqual({ threads: [2, 4], addresses: 64, calls: 100, intervalMs: 100, maxBodyKiB: 1024 });
    expect(parseCrowdArgs(["--help"])).toBe("help");
    expect(CROWD_USAGE).toContain("--threads");
  });

  it("reads every option", () => {
    expect(parseCrowdArgs(["--threads", "1", "--addresses", "8", "--calls", "20", "--interval-ms", "50", "--max-body-kib", "64"])).toEqual({ threads: [1], addresses: 8, calls: 20, intervalMs: 50, maxBodyKiB: 64 });
  });

  it.each([
    [["--threads", "2,x"], '--threads must be a whole number from 1 to 64 (got "x")'],
    [["--addresses", "0"], '--addresses must be a whole number from 1 to 1000 (got "0")'],
    [["--calls", "1.5"], '--calls must be a whole number'],
    [["--bogus"], "Unknown option '--bogus'"],
  ])("refuses %j, naming the problem", (argv, message) => {
    const r = parseCrowdArgs(argv);
    expect(r).toHaveProperty("error");
    expect((r as { error: string }).error).toContain(message);
  });
});
