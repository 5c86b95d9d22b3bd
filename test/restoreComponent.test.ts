/** The restore under Pulumi (mock engine) and in the compose export: before the node, gated on its result. */
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { loadConfig, PUBLISHED_SNAPSHOTS, RESOURCES } from "../config/index.js";
import { exportCompose } from "../export/compose.js";
import { RESTORE_RESULT_PREFIX } from "../volumes/restoreStatus.js";
import { TEST_PROJECT_KEYS, encodeConfigValue, runProgram } from "./harness.js";

const CONTAINER = "docker:index/container:Container";
const COMMAND = "command:local:Command";
const SNAPSHOT = { client: "juno", pendingPollInterval: "3s", snapshot: { url: "latest" } };

describe("L2Node with l2.snapshot (mock engine)", () => {
  it("runs the restore on the node's volume first, on every update, and the node waits for its verdict", async () => {
    const run = await runProgram({ stack: "testnet", config: { l2: SNAPSHOT } });
    expect(run.error).toBeUndefined();
    const restore = run.one(CONTAINER, "rpcstack-l2-l2-restore");
    const juno = run.one(CONTAINER, "rpcstack-l2-juno");
    const gate = run.one(COMMAND, "rpcstack-l2-restored");
    expect(restore.inputs.command).toEqual([
      "node", "/restore/restore.js", "--url", PUBLISHED_SNAPSHOTS.juno!.testnet!.url, "--dest", "/data", "--format", "tar.zst",
      "--need-bytes", String((RESOURCES.testnet.juno.diskGB as number) * 1e9),
    ]);
    expect(restore.inputs.volumes).toEqual([{ volumeName: "rpcstack-sepolia-juno", containerPath: "/data", readOnly: false }]);
    expect(juno.inputs.volumes[0].volumeName).toBe("rpcstack-sepolia-juno");
    expect(restore.inputs).toMatchObject({ user: "0:0", restart: "no", attach: true, logs: true, mustRun: false });
    // Run again on every update (the old container removed first: its name is fixed).
    expect(restore.inputs.envs).toEqual([expect.stringMatching(/^RPCSTACK_RUN=\d+$/)]);
    expect(restore.deleteBeforeReplace).toBe(true);
    expect(gate.dependencies).toContain(restore.urn);
    expect(gate.inputs.create).toBe("true");
    expect(juno.dependencies).toContain(gate.urn);
    // A dependency, not an input: the node's own inputs do not carry the verdict.
    expect(JSON.stringify(juno.inputs)).not.toMatch(/restore/);
  });

  it("a failed restore makes the step before the node fail with the restore's cause", async () => {
    const logs = `rpcstack-restore: 1.0 GB of 2.0 GB\nrpcstack-restore: FAILED: truncated: the archive ends inside a file. The volume is empty again\n${RESTORE_RESULT_PREFIX}${JSON.stringify({ outcome: "failed", cause: "truncated: the archive ends inside a file" })}\n`;
    const run = await runProgram({
      stack: "testnet",
      config: { l2: SNAPSHOT },
      state: (type, name) => (type === CONTAINER && name === "rpcstack-l2-l2-restore" ? { exitCode: 1, containerLogs: logs } : undefined),
    });
    const gate = run.one(COMMAND, "rpcstack-l2-restored");
    expect(gate.inputs.create).toMatch(/^echo 'rpcstack: restoring the L2 node.*database from rpcstack:l2\.snapshot failed: truncated: the archive ends inside a file\. The volume was left empty and the node was not started/);
    expect(gate.inputs.create).toMatch(/>&2; exit 1$/);
  });

  it("Pathfinder's restore writes its SQLite file and gives the volume to uid 1000", async () => {
    const run = await runProgram({ stack: "testnet", config: { l2: { client: "pathfinder", snapshot: { url: "latest", sha256: "ab".repeat(32) } } } });
    const cmd: string[] = run.one(CONTAINER, "rpcstack-l2-l2-restore").inputs.command;
    expect(cmd).toEqual(expect.arrayContaining(["--format", "zst:testnet-sepolia.sqlite", "--owner", "1000:1000", "--sha256", "ab".repeat(32)]));
  });

  it("without l2.snapshot there is no restore and no step before the node", async () => {
    const run = await runProgram({ stack: "testnet" });
    expect(run.byType(CONTAINER).map((r) => r.name)).not.toContain("rpcstack-l2-l2-restore");
    expect(run.byType(COMMAND).map((r) => r.name)).not.toContain("rpcstack-l2-restored");
  });
});

describe("the compose export with l2.snapshot", () => {
  const settings = loadConfig({
    entries: Object.fromEntries(
      Object.entries({ network: "testnet", tier: "recommended", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, l2: SNAPSHOT }).map(([k, v]) => [`rpcstack:${k}`, encodeConfigValue(v)]),
    ),
    isSecret: (k) => k === "projectKeys",
  });
  it("dc-l2.yaml runs the restore as an init service the node waits for (service_completed_successfully), with the bundled program", () => {
    const out = exportCompose(settings);
    const doc = parse(out.files["dc-l2.yaml"]);
    expect(Object.keys(doc.services)).toEqual(["l2-restore", "juno", "indexer"]);
    expect(doc.services.juno.depends_on).toEqual({ "l2-restore": { condition: "service_completed_successfully" } });
    expect(doc.services["l2-restore"]).toMatchObject({ restart: "no", user: "0:0", volumes: ["juno:/data", "./restore/restore.js:/restore/restore.js:ro"] });
    expect(out.mounted).toContainEqual({ path: "restore/restore.js", from: { bundle: "restore/restoreMain.ts" }, mode: 0o644 });
  });
});
