/**
 * The stack a fault run runs against: the package's own compose export of a Sepolia stack with
 * two nodes per chain on this machine's Docker engine, the nodes being replicas of one chain
 * (devtools/images/standins/replica.js) that follow a chain source on the stack's network. Every
 * name carries the run's prefix; every published port moves to a free loopback port.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { loadConfig } from "../../config/index.js";
import { freePort } from "../../devtools/net.js";
import { COMPOSE_FILES, projectName } from "../../export/compose.js";
import { readStackFilePath } from "../../export/stackFile.js";
import { planStack } from "../../plan/index.js";
import type { ServiceSpec } from "../../services/index.js";
import { must, removeByPrefix, run, waitHealthy } from "../../devtools/docker.js";
import { exec } from "./exec.js";
import { buildReplicaImages, type ReplicaImages } from "../../devtools/images/replicas.js";
import type { Layer } from "./report.js";

const ROOT = join(__dirname, "../..");

export interface FaultNode {
  readonly chain: Layer;
  /** Its service name (geth, geth-2, juno, juno-2). */
  readonly service: string;
  readonly container: string;
  /** Its JSON-RPC on loopback, for the run's own reads of its head and blocks. */
  readonly url: string;
}

export interface FaultStack {
  readonly prefix: string;
  readonly dir: string;
  readonly images: ReplicaImages;
  readonly key: string;
  readonly gateway: { readonly url: string; readonly ca: string };
  readonly nodes: readonly FaultNode[];
  /** The stack's private network. */
  readonly network: string;
  readonly paths: Readonly<Record<Layer, string>>;
  /** docker-compose on one of the exported files, without stalling the run's clients. */
  compose(file: (typeof COMPOSE_FILES)[number], ...args: string[]): Promise<string>;
  /** Exports the stack again with other images (a rollout), into the same folder. */
  reexport(images: { readonly geth: string; readonly juno: string }): void;
  /** The readiness service's per-node metrics. */
  nodeMetrics(): Promise<string>;
  down(): void;
}

const NODE_SERVICES: Readonly<Record<Layer, readonly string[]>> = { l1: ["geth", "geth-2"], l2: ["juno", "juno-2"] };

/** The stack file: Sepolia, two nodes per chain on this machine, the test's images through the stack's image keys. */
function stackFile(dir: string, images: ReplicaImages, nodes: { geth: string; juno: string }): string {
  const stack = parse(readFileSync(join(ROOT, "stacks/Pulumi.local.yaml"), "utf8"));
  Object.assign(stack.config, {
    "rpcstack:network": "testnet",
    "rpcstack:tier": "recommended",
    // Two Sepolia L1 + L2 nodes need ~2.1 TB (config/resources.ts); the check reads this figure.
    "rpcstack:host": { kind: "local", diskGB: 4000 },
    "rpcstack:nodes": { l1: ["main", "main"], l2: ["main", "main"] },
    "rpcstack:l1": { executionImage: nodes.geth, consensusImage: images.lighthouse },
    "rpcstack:l2": { client: "juno", pendingPollInterval: "3s", image: nodes.juno },
    "rpcstack:indexer": { enabled: false },
    "rpcstack:gateway": { image: images.haproxy, certbotImage: images.certbot, maxConnections: 4000 },
    "rpcstack:readiness": { ...stack.config["rpcstack:readiness"], image: images.node },
  });
  const file = join(dir, "Pulumi.faults.yaml");
  writeFileSync(file, stringify(stack));
  return file;
}

/** Every port the stack publishes, moved to a free loopback port (nothing of a run meets another's). */
async function movedPorts(file: string): Promise<Map<string, number>> {
  const plan = planStack(loadConfig({ entries: readStackFilePath(file).entries, withoutSecrets: true }));
  const specs: ServiceSpec[] = [
    ...[...plan.nodes.l1, ...plan.nodes.l2].flatMap((n) => Object.values(n.role.services)),
    ...Object.values(plan.readiness.services),
    ...Object.values(plan.gateway.services),
  ].filter((s): s is ServiceSpec => !!s);
  const moved = new Map<string, number>();
  for (const s of specs) for (const p of s.ports.filter((x) => x.publish)) moved.set(`${s.name}:${p.container}/${p.protocol}`, await freePort());
  return moved;
}

/** A port picked free was taken by another program before Docker bound it: worth one more try on others. */
const portTaken = (e: unknown) => /port is already allocated|address already in use/i.test(String((e as Error)?.message ?? e));

export async function startFaultStack(log: (s: string) => void): Promise<FaultStack> {
  try {
    return await startFaultStackOnce(log);
  } catch (e) {
    if (!portTaken(e)) throw e;
    log(`a published port was taken meanwhile (${String((e as Error).message).split("\n").find((l) => /allocated|in use/.test(l))?.trim()}): once more on other ports`);
    return startFaultStackOnce(log);
  }
}

async function startFaultStackOnce(log: (s: string) => void): Promise<FaultStack> {
  const t0 = Date.now();
  const images = buildReplicaImages(log);
  log(`images ready in ${Math.round((Date.now() - t0) / 1000)} s`);
  const prefix = `faults${randomBytes(3).toString("hex")}-`;
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-faults-"));
  const out = join(dir, "compose");
  const key = randomBytes(32).toString("base64url");
  writeFileSync(join(dir, "keys.json"), JSON.stringify([{ name: "faults", key }]), { mode: 0o600 });
  let file = stackFile(dir, images, images);
  const ports = await movedPorts(file);
  const exportTo = () =>
    must("npx", ["tsx", "export/cli.ts", "--stack-file", file, "--out", out, "--name-prefix", prefix, "--keys-file", join(dir, "keys.json"), ...[...ports].flatMap(([k, port]) => ["--publish", `${k}=127.0.0.1:${port}`])], { cwd: ROOT });
  exportTo();
  const composeArgs = (f: (typeof COMPOSE_FILES)[number], args: string[]) => ["-p", projectName(f, prefix), "-f", f, ...args];
  const compose = (f: (typeof COMPOSE_FILES)[number], ...args: string[]) => exec("docker-compose", composeArgs(f, args), { cwd: out });
  const c = (name: string) => `${prefix}rpcstack-${name}`;
  const network = `${prefix}rpcstack`;
  const source = `${prefix}chain-source`;
  const nodes: FaultNode[] = (["l1", "l2"] as const).flatMap((chain) =>
    NODE_SERVICES[chain].map((service) => ({ chain, service, container: c(service), url: `http://127.0.0.1:${ports.get(`${service}:${chain === "l1" ? 8545 : 6060}/tcp`)}` })),
  );
  const down = () => {
    for (const f of [...COMPOSE_FILES].reverse()) run("docker-compose", ["-p", projectName(f, prefix), "-f", f, "down", "-v", "--remove-orphans"], { cwd: out, timeoutMs: 300_000 });
    run("docker", ["rm", "-f", source]);
    removeByPrefix(prefix);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const t1 = Date.now();
    await compose("dc-l1.yaml", "up", "-d");
    // The network exists now: the chain source joins it, as the rest of the world the nodes follow.
    must("docker", ["run", "-d", "--name", source, "--network", network, "--network-alias", "chain-source", images.source]);
    await waitHealthy(["geth", "lighthouse", "geth-2", "lighthouse-2"].map(c), 300_000);
    await compose("dc-l2.yaml", "up", "-d");
    await waitHealthy(["juno", "juno-2"].map(c), 300_000);
    await compose("dc-gateway.yaml", "up", "-d");
    await waitHealthy(["disk-watch", "sync-health", "gateway"].map(c), 300_000);
    log(`stack healthy in ${Math.round((Date.now() - t1) / 1000)} s`);
  } catch (e) {
    down();
    throw e;
  }
  const ca = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(must("docker", ["exec", c("gateway"), "cat", "/certs/gateway.pem"]))![0];
  const nodeMetrics = () => exec("docker", ["exec", c("sync-health"), "node", "-e", "fetch('http://127.0.0.1:8080/metrics').then(r => r.text()).then(t => process.stdout.write(t))"]);
  return {
    prefix,
    dir,
    images,
    key,
    gateway: { url: `https://127.0.0.1:${ports.get("haproxy:443/tcp")}`, ca },
    nodes,
    network,
    paths: { l1: "sep1", l2: "strks" },
    compose,
    reexport: (next) => {
      file = stackFile(dir, images, next);
      exportTo();
    },
    nodeMetrics,
    down,
  };
}

/** Waits until the readiness service has every node in rotation (a run starts from a whole stack). */
export async function allInRotation(stack: FaultStack, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  let last = "";
  while (Date.now() - t0 < timeoutMs) {
    last = await stack.nodeMetrics().catch((e: Error) => e.message);
    const states = [...last.matchAll(/^rpcstack_node_in_rotation\{[^}]*node="([^"]+)"[^}]*\} (\d)$/gm)];
    if (states.length === stack.nodes.length && states.every((m) => m[2] === "1")) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`not every node in rotation within ${timeoutMs / 1000} s:\n${last.split("\n").filter((l) => l.startsWith("rpcstack_node_out_reason") && l.endsWith(" 1")).join("\n")}`);
}
