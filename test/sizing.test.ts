/** Sizing: the resource table, the disk check, history mode, aws sizing and an external L1. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceTableMarkdown } from "../config/index.js";
import { RESULT_PREFIX } from "../readiness/cli.js";
import { ROOT, TEST_PROJECT_KEYS, runProgram } from "./harness.js";
import { hardhatForTests } from "./support/hardhat.js";

const EXTERNAL = { rpcHttp: "https://ops:l1-s3cret@l1.example.net/v3/abc123key", rpcWs: "wss://ops:l1-s3cret@l1.example.net/ws/v3/abc123key" };

describe("the resource table", () => {
  it("docs/sizing.md shows exactly the table config/resources.ts holds", () => {
    const page = readFileSync(join(ROOT, "docs/sizing.md"), "utf8");
    const between = page.split("<!-- resources:begin -->\n")[1]?.split("\n<!-- resources:end -->")[0];
    expect(between).toBe(resourceTableMarkdown());
  });
});

describe("the disk check under the mock engine", () => {
  it("mainnet on the minimum tier is refused with the need, the tier's figure and the ways out, before any resource", async () => {
    const run = await runProgram({ stack: "mainnet", config: { tier: "minimum" } });
    expect(run.error?.message).toContain(
      "rpcstack:tier: the nodes this stack deploys need 1917 GB of disk (geth 1006 GB (history postmerge), lighthouse 20 GB, juno 377 GB, 20 GB of images and logs, 20 GB of metrics (rpcstack:monitoring.retentionGB), and 6 months of growth at 79 GB/month), more than tier minimum's 600 GB",
    );
    expect(run.error?.message).toMatch(/Ways out: a bigger tier or disk .*geth history pruning .*an external L1 \(rpcstack:l1\.external\)/);
    expect(run.resources.filter((r) => r.custom)).toHaveLength(0);
  });

  it("mainnet on the recommended tier fits only with post-merge history: all history is refused", async () => {
    const run = await runProgram({ stack: "mainnet", config: { l1: { history: "all" } } });
    expect(run.error?.message).toMatch(/need 2275 GB .*geth 1364 GB \(history all\).*more than tier recommended's 2000 GB/);
    const bigger = await runProgram({ stack: "mainnet", config: { l1: { history: "all" }, host: { ...awsHost(), diskGB: 2300 } } });
    expect(bigger.error).toBeUndefined();
    expect(bigger.one("aws:ebs/volume:Volume").inputs.size).toBe(2300);
    // Prometheus's retention counts too: without it, the same need minus its 20 GB.
    const without = await runProgram({ stack: "mainnet", config: { l1: { history: "all" }, monitoring: { enabled: false } } });
    expect(without.error?.message).toMatch(/need 2255 GB .*geth 1364 GB \(history all\), lighthouse 20 GB, juno 377 GB, 20 GB of images and logs, and 6 months/);
  });

  it("mainnet + recommended deploys geth with --history.chain=postmerge on a volume with the table's IOPS, on a non-burstable type", async () => {
    const run = await runProgram({ stack: "mainnet" });
    expect(run.error).toBeUndefined();
    const geth = run.one("docker:index/container:Container", "rpcstack-l1-geth");
    expect(geth.inputs.command).toContain("--history.chain=postmerge");
    expect(run.one("aws:ebs/volume:Volume").inputs).toMatchObject({ size: 2000, iops: 8000, throughput: 668 });
    expect(run.one("aws:ec2/instance:Instance").inputs.instanceType).toBe("r7i.xlarge");
    const iops = await runProgram({ stack: "mainnet", config: { host: { ...awsHost(), diskIops: 12000 } } });
    expect(iops.one("aws:ebs/volume:Volume").inputs.iops).toBe(12000);
  });
});

function awsHost() {
  return { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32"] };
}

describe("an external L1 under the mock engine", () => {
  const external = (l2: string) =>
    runProgram({ stack: "mainnet", config: { tier: "minimum", l2: { client: l2 }, host: { ...awsHost(), diskGB: 1000 } }, secrets: { projectKeys: TEST_PROJECT_KEYS, l1: { external: EXTERNAL } } });

  it.each(["juno", "pathfinder"])("%s: no geth or Lighthouse, the L1 URL only as a secret, readiness through it", async (l2) => {
    const run = await external(l2);
    expect(run.error).toBeUndefined();
    const containers = run.byType("docker:index/container:Container");
    expect(containers.map((c) => c.inputs.name)).not.toEqual(expect.arrayContaining([expect.stringMatching(/geth|lighthouse|jwt/)]));
    expect(run.byType("docker:index/volume:Volume").map((v) => v.inputs.name)).not.toEqual(expect.arrayContaining([expect.stringMatching(/geth|lighthouse|jwt/)]));
    const node = containers.find((c) => c.inputs.name === `rpcstack-${l2}`)!;
    const variable = l2 === "juno" ? "JUNO_ETH_NODE" : "PATHFINDER_ETHEREUM_API_URL";
    expect(node.inputs.envs).toContain(`${variable}=${EXTERNAL.rpcWs}`);
    expect(node.secretInputs).toContain("envs");
    expect(node.inputs.command.join(" ")).not.toContain("--eth-node");
    const check = containers.find((c) => c.inputs.name === "rpcstack-sync-check")!;
    expect(check.inputs.command).toEqual(expect.arrayContaining(["--l1-from-env", "RPCSTACK_L1_URL"]));
    expect(check.inputs.envs).toContain(`RPCSTACK_L1_URL=${EXTERNAL.rpcHttp}`);
    // The URL is nowhere outside a secret input, and in no output.
    for (const r of run.resources) {
      if (JSON.stringify(r.inputs).includes("l1-s3cret")) expect(r.secretInputs.length, `${r.type} ${r.name}`).toBeGreaterThan(0);
    }
    expect(JSON.stringify(run.outputs)).not.toContain("l1-s3cret");
    expect(run.outputs.l1RpcUrl).toBe("external (rpcstack:l1.external)");
  });

  it("the gateway relays the L1 route to the external node, or serves none when turned off", async () => {
    const run = await external("juno");
    const cfg = run.one("docker:index/container:Container", "rpcstack-gateway-haproxy").inputs.uploads.find((u: any) => u.file.endsWith("haproxy.cfg")).content;
    expect(cfg).toMatch(/server s1 l1\.example\.net:443 ssl verify required/);
    const off = await runProgram({
      stack: "mainnet",
      config: { tier: "minimum", host: { ...awsHost(), diskGB: 1000 }, gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com", relayExternalL1: false } },
      secrets: { projectKeys: TEST_PROJECT_KEYS, l1: { external: EXTERNAL } },
    });
    expect(off.error).toBeUndefined();
    expect(Object.keys(off.outputs.endpoints as object)).toEqual(["strk"]);
  });

  it("a clear-text l1.external is refused without echoing it", async () => {
    const run = await runProgram({ stack: "mainnet", config: { l1: { external: EXTERNAL } } });
    expect(run.error?.message).toContain("rpcstack:l1.external: must be set as a secret");
    expect(run.error?.message).not.toContain("l1-s3cret");
  });
});

describe("rpcstack-ready against a real EVM node as the external L1", () => {
  const evm = hardhatForTests();

  it("reads the URL (with credentials) from the environment, reports L1 synced, and never prints it", async () => {
    const withCreds = evm().url.replace("http://", "http://ops:l1-s3cret@");
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const p = spawn(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "readiness/cli.ts"), "--l1-from-env", "RPCSTACK_L1_URL", "--report-only"], {
        cwd: ROOT,
        env: { ...process.env, RPCSTACK_L1_URL: withCreds },
      });
      let text = "";
      p.stdout.on("data", (d) => (text += d));
      p.stderr.on("data", (d) => (text += d));
      p.on("close", (code) => resolve({ code, text }));
    });
    expect(out.code).toBe(0);
    const result = JSON.parse(out.text.split("\n").find((l) => l.startsWith(RESULT_PREFIX))!.slice(RESULT_PREFIX.length));
    expect(result.l1.status).toBe("synced");
    expect(out.text).not.toContain("l1-s3cret");
  }, 60_000);
});
