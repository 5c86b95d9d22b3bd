import { describe, expect, it } from "vitest";
import { parseWsFilterArgs, WS_FILTER_USAGE } from "../bench/wsFilterArgs.js";

describe("bench/wsFilter.ts's command line", () => {
  it("takes the defaults, and --help", () => {
    expect(parseWsFilterArgs([])).toEqual({ rounds: 20, seconds: 2, connections: 32, lua: [] });
    expect(parseWsFilterArgs(["--help"])).toBe("help");
    expect(WS_FILTER_USAGE).toContain("noop-req");
  });

  it("reads every option, a --lua case among the cases", () => {
    expect(parseWsFilterArgs(["--rounds", "4", "--seconds", "0.5", "--connections", "8", "--lua", "old=/tmp/lua", "--cases", "policy,old"])).toEqual({
      rounds: 4, seconds: 0.5, connections: 8, lua: [{ name: "old", dir: "/tmp/lua" }], cases: ["policy", "old"],
    });
  });

  it.each([
    [["--rounds", "0"], '--rounds must be a positive integer (got "0")'],
    [["--rounds", "2.5"], '--rounds must be a positive integer (got "2.5")'],
    [["--seconds", "x"], '--seconds must be a positive number (got "x")'],
    [["--cases", "policy,nope"], '--cases: unknown case "nope"'],
    [["--lua", "dir-only"], '--lua must be NAME=DIR'],
    [["--lua", "tunnel=/tmp"], "--lua tunnel: that name is one of the built-in cases"],
    [["--lua", "a=/x", "--lua", "a=/y"], "--lua: each NAME may be given once"],
    [["--bogus"], "Unknown option '--bogus'"],
  ])("refuses %j, naming the problem", (argv, message) => {
    const r = parseWsFilterArgs(argv);
    expect(r).toHaveProperty("error");
    expect((r as { error: string }).error).toContain(message);
  });
});
