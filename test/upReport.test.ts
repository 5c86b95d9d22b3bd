/** npm run up's closing words on a failed update: the program's own errors, as the real engine prints them. */
import { describe, expect, it } from "vitest";
import { programErrors } from "../scripts/upReport.js";

// The shape of `pulumi up`'s output when the program fails: the Stack's diagnostics as the built CLI
// v3.248.0 prints a RunError, a component's ResourceError (hideStack) under its own name the same way.
const ENGINE_OUTPUT = `Updating (local):
 +  pulumi:pulumi:Stack rpcstack-local creating (0s) error: rpcstack: rpcstack:gateway.maxConnections 15000 needs 31024 open files
 +  pulumi:pulumi:Stack rpcstack-local **creating failed** 1 error
Diagnostics:
  pulumi:pulumi:Stack (rpcstack-local):
    error: rpcstack: rpcstack:gateway.maxConnections 15000 needs 31024 open files in the gateway container
  rpcstack:index:SyncReadiness (rpcstack-readiness):
    error: rpcstack: the nodes were not synced within rpcstack:readiness.timeoutMinutes (exit 1):
      l2: behind by 40 blocks
      gave up after 1 minute

Resources:
    + 1 created

Duration: 3s

error: update failed
`;

describe("programErrors", () => {
  it("keeps each of the program's errors with its continuation lines, and drops the engine's own generic ones", () => {
    expect(programErrors(ENGINE_OUTPUT)).toEqual([
      "rpcstack: rpcstack:gateway.maxConnections 15000 needs 31024 open files in the gateway container",
      "rpcstack: the nodes were not synced within rpcstack:readiness.timeoutMinutes (exit 1):\n  l2: behind by 40 blocks\n  gave up after 1 minute",
    ]);
  });

  it("finds nothing in output without a program error", () => {
    expect(programErrors("Updating (local):\n\nerror: update failed\n")).toEqual([]);
  });
});
