import { describe, expect, it } from "vitest";
import { runProgram, type StackName } from "./harness.js";

const STACKS: StackName[] = ["local", "testnet", "mainnet"];

describe.each(STACKS)("stack %s", (stack) => {
  it("loads, validates and builds one RpcProvider", async () => {
    const run = await runProgram({ stack });
    expect(run.error).toBeUndefined();
    const provider = run.one("rpcstack:index:RpcProvider");
    expect(provider.name).toBe("rpcstack");
    expect(run.outputs.network).toBe({ local: "devnet", testnet: "testnet", mainnet: "mainnet" }[stack]);
  });
});

describe("invalid config stops the program before any resource exists", () => {
  it("a wrong value names the key and registers nothing", async () => {
    const run = await runProgram({ stack: "testnet", config: { l2: { client: "juno", pendingPollInterval: "fast" } } });
    expect(run.error?.message).toContain('rpcstack:l2.pendingPollInterval: must be a duration like "3s"');
    expect(run.resources).toHaveLength(0);
  });

  it("a missing secret names the key and the command that sets it", async () => {
    const run = await runProgram({ stack: "local", secrets: {} });
    expect(run.error?.message).toContain("rpcstack:projectKeys: is required");
    expect(run.resources).toHaveLength(0);
  });

  it("project keys committed in clear text are refused", async () => {
    const run = await runProgram({
      stack: "local",
      secrets: {},
      config: { projectKeys: [{ name: "a", key: "k".repeat(40) }] },
    });
    expect(run.error?.message).toContain("rpcstack:projectKeys: must be set as a secret");
    expect(run.error?.message).not.toContain("k".repeat(40));
    expect(run.resources).toHaveLength(0);
  });

  it("a Juno release too old to follow the live network is a config error naming the minimum", async () => {
    const run = await runProgram({ stack: "mainnet", config: { l2: { client: "juno", image: "nethermind/juno:v0.15.3" } } });
    expect(run.error?.message).toMatch(/rpcstack:l2\.image: Juno v0\.15\.3 is too old: .*the minimum is v0\.16\.6/);
    expect(run.resources).toHaveLength(0);
  });

  it("a newer Juno release is accepted", async () => {
    const run = await runProgram({ stack: "mainnet", config: { l2: { client: "juno", image: "nethermind/juno:v0.17.4" } } });
    expect(run.error).toBeUndefined();
    expect(run.one("docker:index/container:Container", "rpcstack-l2-juno").inputs.command).toContain("--preconfirmed-poll-interval");
  });
});
