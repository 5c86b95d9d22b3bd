/** Several nodes per chain under the mock engine: the resources per node and host, and the rolling-upgrade order Pulumi follows. */
import { describe, expect, it } from "vitest";
import { runProgram, TEST_PROJECT_KEYS, TEST_SSH_PRIVATE_KEY, type ProgramRun } from "./harness.js";

const CONTAINER = "docker:index/container:Container";
const ssh = (address: string, extra: Record<string, unknown> = {}) => ({ kind: "ssh", address, user: "rpcstack", port: 22, ...extra });
const MAIN = ssh("203.0.113.10", { privateAddress: "10.0.0.10", diskGB: 4000 });
const twoPerChain = { host: MAIN, nodes: { l1: ["main", "main"], l2: ["main", "main"] } };
const container = (run: ProgramRun, name: string) => run.byType(CONTAINER).find((r) => r.inputs.name === name) ?? expect.fail(`no container ${name}`);
/** Every resource a resource waits for, directly or through the resources it waits for. */
const waitsFor = (run: ProgramRun, urn: string, seen = new Set<string>()): Set<string> => {
  for (const d of run.byUrn(urn)?.dependencies ?? []) if (!seen.has(d)) (seen.add(d), waitsFor(run, d, seen));
  return seen;
};

describe("two nodes per chain on the stack's host", () => {
  it("each node's containers and kept volumes; the first keeps the resource names of a single node", async () => {
    const run = await runProgram({ stack: "testnet", config: twoPerChain });
    expect(run.error).toBeUndefined();
    const names = run.byType(CONTAINER).map((r) => r.inputs.name);
    expect(names).toEqual(expect.arrayContaining(["rpcstack-geth", "rpcstack-geth-2", "rpcstack-lighthouse-2", "rpcstack-juno-2", "rpcstack-rollout-geth", "rpcstack-rollout-juno"]));
    expect(names).not.toContain("rpcstack-rollout-geth-2");
    expect(container(run, "rpcstack-geth").name).toBe("rpcstack-l1-geth");
    const volume = run.byType("docker:index/volume:Volume").find((v) => v.inputs.name === "rpcstack-sepolia-geth-2")!;
    expect(volume.retainOnDelete).toBe(true);
    // One private network on the host, created by its first L1 node.
    expect(run.byType("docker:index/network:Network").map((n) => n.name)).toEqual(["rpcstack-l1-network"]);
  });

  it("node 2 is replaced only after node 1's step has passed: the step waits on node 1's containers, node 2's containers on the step", async () => {
    const run = await runProgram({ stack: "testnet", config: twoPerChain });
    const step = container(run, "rpcstack-rollout-geth");
    expect(step.dependencies).toEqual(expect.arrayContaining([container(run, "rpcstack-geth").urn, container(run, "rpcstack-lighthouse").urn]));
    for (const n of ["rpcstack-geth-2", "rpcstack-lighthouse-2"]) expect(waitsFor(run, container(run, n).urn)).toContain(step.urn);
    expect(waitsFor(run, container(run, "rpcstack-juno-2").urn)).toContain(container(run, "rpcstack-rollout-juno").urn);
    // Node 2's image too: a new image replaces the containers that use it, so it must wait as well.
    const image2 = run.byType("docker:index/remoteImage:RemoteImage").find((r) => r.name === "rpcstack-l1-2-client-go-image")!;
    expect(waitsFor(run, image2.urn)).toContain(step.urn);
    // Nothing of node 1 waits for node 2.
    expect(waitsFor(run, container(run, "rpcstack-geth").urn)).not.toContain(container(run, "rpcstack-geth-2").urn);
    // The gateway opens after the readiness check, which waits for every node.
    expect([...waitsFor(run, container(run, "rpcstack-sync-check").urn)]).toEqual(expect.arrayContaining([container(run, "rpcstack-geth-2").urn, container(run, "rpcstack-juno-2").urn]));
  });

  it("a step runs again exactly when its node's containers change: a new geth image changes the L1 step's input, not the L2 one's", async () => {
    const before = await runProgram({ stack: "testnet", config: twoPerChain });
    const after = await runProgram({ stack: "testnet", config: { ...twoPerChain, l1: { executionImage: "ethereum/client-go:v1.17.6" } } });
    const env = (run: ProgramRun, n: string) => container(run, n).inputs.envs as string[];
    expect(env(after, "rpcstack-rollout-geth")).not.toEqual(env(before, "rpcstack-rollout-geth"));
    expect(env(after, "rpcstack-rollout-juno")).toEqual(env(before, "rpcstack-rollout-juno"));
    expect(container(after, "rpcstack-geth-2").inputs.image).toBe("ethereum/client-go:v1.17.6");
  });

  it("a step that did not pass stops the update before node 2 is touched, with the step's own last words", async () => {
    const run = await runProgram({
      stack: "testnet",
      config: twoPerChain,
      state: (type, _name, inputs) =>
        type === CONTAINER && inputs.name === "rpcstack-rollout-geth" ? { exitCode: 1, containerLogs: "rpcstack-ready: l1/geth was not in rotation within 60 min (out of rotation, lagging: block 90, 10 behind)\n" } : undefined,
    });
    expect(run.error?.message).toMatch(/rollout-geth: the node before it did not come back into rotation \(exit 1\); the next node was left as it is:\n.*l1\/geth was not in rotation within 60 min/);
    expect(run.byType(CONTAINER).map((r) => r.inputs.name)).not.toContain("rpcstack-geth-2");
  });
});

describe("nodes on a further host", () => {
  const config = { host: MAIN, hosts: { "node-b": ssh("203.0.113.11", { privateAddress: "10.0.0.11" }) }, nodes: { l1: ["main", "node-b"], l2: ["main", "node-b"] } };
  const secrets = { projectKeys: TEST_PROJECT_KEYS, sshPrivateKey: TEST_SSH_PRIVATE_KEY };

  it("the further host gets its own SSH host, Docker provider and network; its nodes and disk watcher run there; the rollout step runs on the stack's host", async () => {
    const run = await runProgram({ stack: "testnet", config, secrets });
    expect(run.error).toBeUndefined();
    const providers = run.byType("pulumi:providers:docker");
    const providerOf = (name: string) => providers.find((p) => container(run, name).provider?.startsWith(p.urn))?.name;
    expect(run.byType("rpcstack:index:SshHost").map((h) => h.name)).toEqual(["rpcstack-host", "rpcstack-host-node-b"]);
    expect(providerOf("rpcstack-geth-2")).toBe("rpcstack-host-node-b-docker");
    expect(providerOf("rpcstack-juno-2")).toBe("rpcstack-host-node-b-docker");
    expect(providerOf("rpcstack-disk-watch")).toBe("rpcstack-host-docker");
    expect(providerOf("rpcstack-rollout-geth")).toBe("rpcstack-host-docker");
    const watchers = run.byType(CONTAINER).filter((r) => r.inputs.name === "rpcstack-disk-watch");
    expect(watchers.map((w) => providers.find((p) => w.provider?.startsWith(p.urn))?.name).sort()).toEqual(["rpcstack-host-docker", "rpcstack-host-node-b-docker"]);
    expect(run.byType("docker:index/network:Network").map((n) => n.name)).toEqual(["rpcstack-l1-network", "rpcstack-l1-2-network"]);
    expect(container(run, "rpcstack-geth-2").inputs.ports).toEqual(expect.arrayContaining([{ internal: 8545, external: 8545, ip: "10.0.0.11", protocol: "tcp" }]));
  });

  it("an aws further host is given its private address, and opens its nodes' RPC and checks to the stack's host only", async () => {
    const aws = { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32"], privateAddress: "172.31.0.11" };
    const run = await runProgram({ stack: "testnet", config: { ...config, hosts: { b: aws }, nodes: { l1: ["main", "b"], l2: ["main", "b"] } }, secrets });
    expect(run.error).toBeUndefined();
    expect(run.one("aws:ec2/instance:Instance").inputs.privateIp).toBe("172.31.0.11");
    const ingress = run.one("aws:ec2/securityGroup:SecurityGroup").inputs.ingress as { fromPort: number; protocol: string; cidrBlocks?: string[] }[];
    const rule = (port: number) => ingress.filter((r) => r.fromPort === port);
    expect(rule(8545)).toEqual([expect.objectContaining({ protocol: "tcp", cidrBlocks: ["10.0.0.10/32"] })]);
    expect(rule(9105)).toEqual([expect.objectContaining({ cidrBlocks: ["10.0.0.10/32"] })]);
    // The first node on that host listens for peers on the usual ports, opened once.
    expect(rule(30303).filter((r) => r.protocol === "tcp")).toHaveLength(1);
  });
});
