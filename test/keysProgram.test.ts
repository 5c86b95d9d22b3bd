/** Under the mock engine: project keys reach only the key sync, so changing them replaces nothing else. */
import { describe, expect, it } from "vitest";
import { keyMap } from "../gateway/build.js";
import { TEST_PROJECT_KEYS, runProgram, stackFileConfig } from "./harness.js";

const CONTAINER = "docker:index/container:Container";
const other = { name: "ci-third", key: "t".repeat(20) + "0F1E2D3C4B5A6978" };

describe("project keys under the mock engine", () => {
  it("the key sync alone carries the key map (a secret) and shares HAProxy's loopback; a key change leaves every other container's inputs as they were", async () => {
    const before = await runProgram({ stack: "mainnet" });
    const after = await runProgram({ stack: "mainnet", secrets: { projectKeys: [...TEST_PROJECT_KEYS, other] } });
    const sync = after.one(CONTAINER, "rpcstack-gateway-key-sync");
    const upload = sync.inputs.uploads.findIndex((u: any) => u.file === "/run/rpcstack-keys/keys.map");
    expect(sync.inputs.uploads[upload].content).toBe(keyMap([...TEST_PROJECT_KEYS, other]));
    expect(sync.secretInputs).toEqual([`uploads.${upload}.content`]);
    // HAProxy's container by its id, as Docker reads it back (the mock engine's ids are `<resource>-id`).
    expect(sync.inputs.networkMode).toBe("container:rpcstack-gateway-haproxy-id");
    expect(sync.inputs.networksAdvanced).toBeUndefined();
    expect(sync.deleteBeforeReplace).toBe(true);
    expect(sync.dependencies).toContain(after.one(CONTAINER, "rpcstack-gateway-haproxy").urn);
    expect(before.one(CONTAINER, "rpcstack-gateway-key-sync").inputs.uploads[upload].content).toBe(keyMap(TEST_PROJECT_KEYS));
    for (const c of before.byType(CONTAINER).filter((c) => c.name !== "rpcstack-gateway-key-sync")) {
      expect(after.one(CONTAINER, c.name).inputs, c.name).toEqual(c.inputs);
      expect(JSON.stringify(c.inputs), c.name).not.toContain("keys.map\",\"content");
    }
  });

  it("a quota change replaces the key sync alone: its quota map changes, every other container's inputs (HAProxy's config too) stay as they were", async () => {
    const gateway = (quotas: unknown[]) => ({ ...JSON.parse(stackFileConfig("mainnet")["rpcstack:gateway"] ?? "{}"), quotas });
    const before = await runProgram({ stack: "mainnet", config: { gateway: gateway([]) } });
    const after = await runProgram({ stack: "mainnet", config: { gateway: gateway([{ name: "ci-first", calls: 1000, per: "day" }]) } });
    const quotas = (r: typeof after) => r.one(CONTAINER, "rpcstack-gateway-key-sync").inputs.uploads.find((u: any) => u.file === "/run/rpcstack-keys/quotas.map").content;
    expect([quotas(before), quotas(after)]).toEqual(["# <name> <calls> <day|month>\n", "# <name> <calls> <day|month>\nci-first 1000 day\n"]);
    for (const c of before.byType(CONTAINER).filter((c) => c.name !== "rpcstack-gateway-key-sync")) expect(after.one(CONTAINER, c.name).inputs, c.name).toEqual(c.inputs);
  });

  it("the post-deploy smoke relays go out once the key sync has run, so the first deploy's keys are live", async () => {
    const run = await runProgram({ stack: "local" });
    const smoke = run.invokes.filter((i) => i.token === "command:local:run" && "RPCSTACK_SMOKE_KEY" in (i.inputs.environment ?? {}));
    expect(smoke).toHaveLength(1);
    expect(smoke[0].after).toContain("rpcstack-gateway-key-sync");
  });
});
