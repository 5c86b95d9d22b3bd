/** Several nodes per chain, as plain data: the containers per node and host, the checks, the rollout steps, the gateway's servers. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type RpcStackConfig } from "../config/index.js";
import { LUA_FILES, LUA_SOURCE_DIR } from "../gateway/lua.js";
import { planStack, type StackPlan } from "../plan/index.js";
import { GATEWAY_PATHS, type ServiceSpec } from "../services/index.js";
import { ROOT, TEST_PROJECT_KEYS } from "./harness.js";
import { checkContainerFiles } from "./support/haproxy.js";
import { loadRaw } from "./support/rawConfig.js";

type Raw = Record<string, unknown>;
const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----";
const ssh = (address: string, extra: Raw = {}) => ({ kind: "ssh", address, user: "rpcstack", ...extra });
const stack = (over: Raw): RpcStackConfig => {
  const raw: Raw = {
    network: "testnet",
    tier: "recommended",
    host: ssh("203.0.113.10", { privateAddress: "10.0.0.10", diskGB: 4000 }),
    sshPrivateKey: KEY,
    projectKeys: TEST_PROJECT_KEYS,
    gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com" },
    ...over,
  };
  return loadRaw(raw);
};
const services = (plan: StackPlan): ServiceSpec[] => [...plan.nodes.l1, ...plan.nodes.l2].flatMap((n) => Object.values(n.role.services).filter((s): s is ServiceSpec => !!s));
const byName = (plan: StackPlan, name: string) => {
  const all = [...services(plan), ...Object.values(plan.readiness.services), ...plan.hosts.flatMap((h) => Object.values(h.services))].filter((s): s is ServiceSpec => !!s);
  const s = all.find((x) => x.name === name);
  if (!s) throw new Error(`no service ${name} among ${all.map((x) => x.name).join(", ")}`);
  return s;
};
/** The gateway's files as its container sees them, for haproxy -c. */
const containerFiles = (plan: StackPlan) => ({
  [`${GATEWAY_PATHS.configDir}/haproxy.cfg`]: plan.gatewayConfig.compiled.config,
  [`${GATEWAY_PATHS.configDir}/keys.map`]: "",
  ...Object.fromEntries(Object.entries(plan.gatewayConfig.compiled.files).map(([n, c]) => [`${GATEWAY_PATHS.configDir}/${n}`, c])),
  ...Object.fromEntries(LUA_FILES.map((f) => [`${GATEWAY_PATHS.luaDir}/${f}`, readFileSync(join(ROOT, LUA_SOURCE_DIR, f), "utf8")])),
});

describe("two nodes per chain on the stack's host", () => {
  const plan = planStack(stack({ nodes: { l1: ["main", "main"], l2: ["main", "main"] } }));

  it("the second node's containers, volumes and ports are its own; it follows its own L1 node", () => {
    expect(services(plan).map((s) => s.name)).toEqual(["jwt-init", "geth", "lighthouse", "rollout-geth", "jwt-init-2", "geth-2", "lighthouse-2", "juno", "indexer", "rollout-juno", "juno-2"]);
    const geth2 = byName(plan, "geth-2");
    expect(geth2.containerName).toBe("rpcstack-geth-2");
    expect(geth2.command).toContain("--port=30403");
    expect(geth2.ports.filter((p) => p.publish).map((p) => `${p.publish!.address}:${p.publish!.port}->${p.container}/${p.protocol}`)).toEqual([
      "0.0.0.0:30403->30403/tcp", "0.0.0.0:30403->30403/udp", "127.0.0.1:8645->8545/tcp", "127.0.0.1:8646->8546/tcp",
    ]);
    expect(geth2.volumes).toEqual([{ volume: "geth-2", path: "/root/.ethereum" }, { volume: "jwt-2", path: "/jwt", readOnly: true }]);
    expect(plan.nodes.l1[1].role.volumes.map((v) => v.name)).toEqual(["rpcstack-sepolia-jwt-2", "rpcstack-sepolia-geth-2", "rpcstack-sepolia-lighthouse-2"]);
    expect(byName(plan, "lighthouse-2").command).toEqual(expect.arrayContaining(["--execution-endpoint=http://geth-2:8551", "--port=9100", "--quic-port=9101"]));
    expect(byName(plan, "juno-2").command).toContain("--eth-node=ws://geth-2:8546");
    expect(byName(plan, "juno-2").ports.find((p) => p.purpose === "rpc")?.publish).toEqual({ address: "127.0.0.1", port: 6160 });
    // The first node keeps the names a single node always had.
    expect(byName(plan, "geth").containerName).toBe("rpcstack-geth");
    expect(plan.nodes.l1[0].role.volumes.map((v) => v.name)).toEqual(["rpcstack-sepolia-jwt", "rpcstack-sepolia-geth", "rpcstack-sepolia-lighthouse"]);
  });

  it("rolling upgrades: node 2 starts after node 1's step, which waits for node 1 in rotation and runs again when node 1's containers change", () => {
    const step = byName(plan, "rollout-geth");
    expect(step.restart).toBe("no");
    expect(step.command).toEqual(expect.arrayContaining(["--await", "l1/geth", "--l1", "geth=http://geth:8545", "--l1", "geth-2=http://geth-2:8545", "--hold-seconds", "10"]));
    expect(step.command).not.toContain("--l2");
    expect(step.dependsOn).toEqual([{ service: "geth", condition: "service_started" }, { service: "lighthouse", condition: "service_started" }]);
    for (const s of ["geth-2", "lighthouse-2"]) expect(byName(plan, s).dependsOn).toContainEqual({ service: "rollout-geth", condition: "service_completed_successfully" });
    expect(byName(plan, "juno-2").dependsOn).toEqual([{ service: "rollout-juno", condition: "service_completed_successfully" }]);
    const upgraded = planStack(stack({ nodes: { l1: ["main", "main"], l2: ["main", "main"] }, l1: { executionImage: "ethereum/client-go:v1.17.6" } }));
    const after = (p: StackPlan, name: string) => byName(p, name).environment.RPCSTACK_ROLLOUT_AFTER;
    expect(after(upgraded, "rollout-geth")).not.toBe(after(plan, "rollout-geth"));
    expect(after(upgraded, "rollout-juno")).toBe(after(plan, "rollout-juno"));
  });

  it("the readiness service polls every node by name, each second, on its chain, and the disk watcher checks each node", () => {
    const health = byName(plan, "sync-health");
    expect(health.command).toEqual(expect.arrayContaining(["--l1", "geth=http://geth:8545", "--l1", "geth-2=http://geth-2:8545", "--l2", "juno-2=http://juno-2:6060/v0_10", "--l2-ready", "juno-2=http://juno-2:6060/ready/sync", "--l1-chain-id", "0xaa36a7", "--l2-chain-id", "0x534e5f5345504f4c4941", "--interval-seconds", "1", "--chain-name", "l1=sep1"]));
    const watcher = byName(plan, "disk-watch");
    expect(watcher.command).toEqual(expect.arrayContaining(["--check", "l1-geth-2:geth-2,lighthouse-2=http://sync-health:8080/ready/l1/geth-2", "--check", "l2-juno-2:juno-2=http://sync-health:8080/ready/l2/juno-2"]));
  });

  it("the gateway has a server per node, each following its own check; haproxy -c accepts the files", () => {
    const sep1 = plan.gatewayConfig.chains.find((c) => c.path === "sep1")!;
    expect(sep1.nodes).toEqual([
      { name: "geth", rpcHttp: "http://geth:8545", rpcWs: "ws://geth:8546", healthUrl: "http://disk-watch:9105/check/l1-geth" },
      { name: "geth-2", rpcHttp: "http://geth-2:8545", rpcWs: "ws://geth-2:8546", healthUrl: "http://disk-watch:9105/check/l1-geth-2" },
    ]);
    const cfg = plan.gatewayConfig.compiled.config;
    expect(cfg).toMatch(/backend be_sep1_read_nodes\n(.*\n)*?    server geth-2 geth-2:8545 track be_sep1_health_geth-2\/s1 on-marked-down shutdown-sessions/);
    // Reads reach the nodes through the read hop, which sends again one that came back empty.
    expect(cfg).toMatch(/backend be_sep1_rpc\n(    .*\n)*?    retry-on conn-failure empty-response 502\n    server hop abns@rpcstack-sep1-read-/);
    expect(cfg).toContain("backend be_strks_health_juno-2");
    expect(cfg).toContain("use_backend be_node_metrics if { path /metrics/nodes }");
    // The response cache's misses and polls are reads: sent to another node when theirs fails.
    expect(cfg).toMatch(/frontend cache_fetch\n(.*\n)*?    http-request set-var\(txn.rpc_read\) bool\(true\)\n/);
    expect(checkContainerFiles(containerFiles(plan))).toContain("Configuration file is valid");
  });

  it("restored from a snapshot: each L2 node restores its own volume before it starts", () => {
    const restored = planStack(stack({ nodes: { l1: ["main", "main"], l2: ["main", "main"] }, l2: { client: "juno", snapshot: { url: "latest" } } }));
    for (const [node, restore, volume] of [["juno", "l2-restore", "juno"], ["juno-2", "l2-restore-2", "juno-2"]]) {
      expect(byName(restored, restore).volumes).toEqual([{ volume, path: "/data" }]);
      expect(byName(restored, restore).containerName).toBe(`rpcstack-${restore}`);
      expect(byName(restored, node).dependsOn).toContainEqual({ service: restore, condition: "service_completed_successfully" });
    }
    // The watcher's 503 body speaks for the first node only: a chain of several answers the plain 503.
    expect(restored.gatewayConfig.chains.find((c) => c.path === "strks")!.statusUrl).toBeUndefined();
  });
});

describe("nodes on a further host", () => {
  const plan = planStack(stack({ hosts: { "node-b": ssh("203.0.113.11", { privateAddress: "10.0.0.11" }) }, nodes: { l1: ["main", "node-b"], l2: ["main", "node-b"] } }));

  it("the further host's nodes publish their RPC on its private address; the gateway reaches and checks them there", () => {
    expect(plan.nodes.l1[1].slot.host).toBe("node-b");
    expect(byName(plan, "geth-2").ports.filter((p) => p.purpose === "rpc" || p.purpose === "ws").map((p) => p.publish)).toEqual([{ address: "10.0.0.11", port: 8545 }, { address: "10.0.0.11", port: 8546 }]);
    expect(byName(plan, "juno-2").command).toContain("--eth-node=ws://geth-2:8546");
    expect(plan.gatewayConfig.chains.find((c) => c.path === "strks")!.nodes![1]).toEqual({ name: "juno-2", rpcHttp: "http://10.0.0.11:6060/v0_10", rpcWs: "ws://10.0.0.11:6061/v0_10", healthUrl: "http://10.0.0.11:9105/check/l2-juno-2" });
  });

  it("the further host runs its own disk watcher over its nodes' volumes, asking the stack's host's readiness service, which is published on the private address", () => {
    expect(plan.hosts.map((h) => h.host)).toEqual(["node-b"]);
    const watcher = plan.hosts[0].services.diskWatch!;
    expect(watcher.volumes.map((v) => v.volume)).toEqual(["geth-2", "lighthouse-2", "juno-2"]);
    expect(watcher.command).toEqual(expect.arrayContaining(["--check", "l1-geth-2:geth-2,lighthouse-2=http://10.0.0.10:8080/ready/l1/geth-2"]));
    expect(watcher.ports).toEqual([{ container: 9105, protocol: "tcp", purpose: "health", publish: { address: "10.0.0.11", port: 9105 } }]);
    expect(byName(plan, "sync-health").ports[0].publish).toEqual({ address: "10.0.0.10", port: 8080 });
    // The stack's host's watcher mounts only its own nodes' volumes.
    expect(plan.readiness.services.diskWatch!.volumes.map((v) => v.volume)).toEqual(["geth", "lighthouse", "juno"]);
  });
});
