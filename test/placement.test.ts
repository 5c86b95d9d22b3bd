/** Several nodes per chain: where they run (nodes, hosts) and the errors for what cannot run. */
import { describe, expect, it } from "vitest";
import { l1SlotFor, nodeSlots } from "../config/placement.js";
import { TEST_PROJECT_KEYS } from "./harness.js";
import { loadRaw as load, problemsOf } from "./support/rawConfig.js";

type Raw = Record<string, unknown>;
const KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n-----END OPENSSH PRIVATE KEY-----";
const sshHost = (address: string, extra: Raw = {}) => ({ kind: "ssh", address, user: "rpcstack", ...extra });
// Sepolia: geth ~906 GB, Lighthouse 74, Juno 54 (config/resources.ts); 2 TB holds one of each.
const base = (over: Raw = {}): Raw => ({ network: "testnet", tier: "recommended", host: sshHost("203.0.113.10", { privateAddress: "10.0.0.10" }), sshPrivateKey: KEY, projectKeys: TEST_PROJECT_KEYS, gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com" }, ...over });
const nodeB = { "node-b": sshHost("203.0.113.11", { privateAddress: "10.0.0.11" }) };

describe("nodes and hosts", () => {
  it("one node per layer on the stack's host unless said", () => {
    const s = load(base());
    expect(s.nodes).toEqual({ l1: ["main"], l2: ["main"] });
    expect(nodeSlots(s).map((x) => `${x.layer}${x.suffix}@${x.host}+${x.portOffset}`)).toEqual(["l1@main+0", "l2@main+0"]);
  });

  it("places nodes on the stack's host and further hosts; the second on one host moves its ports; an L2 node follows an L1 node of its host", () => {
    const s = load(base({ hosts: nodeB, nodes: { l1: ["main", "node-b", "main"], l2: ["node-b", "main"] }, host: sshHost("203.0.113.10", { privateAddress: "10.0.0.10", diskGB: 4000 }) }));
    expect(nodeSlots(s).map((x) => `${x.layer}${x.suffix}@${x.host}+${x.portOffset}`)).toEqual(["l1@main+0", "l1-2@node-b+0", "l1-3@main+100", "l2@node-b+0", "l2-2@main+0"]);
    const [, , , l2b, l2main] = nodeSlots(s);
    expect(l1SlotFor(s, l2b)?.suffix).toBe("-2");
    expect(l1SlotFor(s, l2main)?.suffix).toBe("");
    expect(s.hosts["node-b"]).toMatchObject({ kind: "ssh", port: 22, privateAddress: "10.0.0.11", tier: { name: "recommended" } });
  });

  it("a node on an undeclared host names the key, the host and the declared ones", () => {
    expect(problemsOf(base({ hosts: nodeB, nodes: { l1: ["main", "node-c"], l2: ["main", "node-b"] } }))).toContain(
      'rpcstack:nodes.l1[1]: host "node-c" is not declared (declared: main, node-b); add it under rpcstack:hosts',
    );
  });

  it("two nodes of one chain on one host without the disk for both: the host, the need, the figure and the ways out", () => {
    expect(problemsOf(base({ nodes: { l1: ["main", "main"] } }))).toEqual([
      "rpcstack:tier: the 3 nodes rpcstack:nodes places on host main need 2144 GB of disk (2 × geth 906 GB (history postmerge), 2 × lighthouse 74 GB, juno 54 GB, 20 GB of images and logs, 20 GB of metrics (rpcstack:monitoring.retentionGB), and 6 months of growth at 15 GB/month), more than tier recommended's 2000 GB. " +
        "Ways out: a bigger tier or disk (rpcstack:tier, rpcstack:host.diskGB); fewer nodes on this host, or a further host for some (rpcstack:nodes, rpcstack:hosts); geth history pruning (rpcstack:l1.history: postprague); an external L1 (rpcstack:l1.external); fewer months of headroom (rpcstack:headroomMonths, now 6)",
    ]);
    // A further host is checked against its own tier and disk.
    const small = { "node-b": sshHost("203.0.113.11", { privateAddress: "10.0.0.11", tier: "minimum" }) };
    expect(problemsOf(base({ hosts: small, nodes: { l1: ["main", "node-b"], l2: ["main", "node-b"] } }))[0]).toMatch(
      /^rpcstack:hosts\.node-b\.tier: the 2 nodes rpcstack:nodes places on host node-b need 1108 GB .*more than host node-b's tier minimum's 600 GB\. Ways out: a bigger tier or disk \(rpcstack:hosts\.node-b\.tier, rpcstack:hosts\.node-b\.diskGB\)/,
    );
    expect(() => load(base({ hosts: { "node-b": sshHost("203.0.113.11", { privateAddress: "10.0.0.11", tier: "minimum", diskGB: 1200 }) }, nodes: { l1: ["main", "node-b"], l2: ["main", "node-b"] } }))).not.toThrow();
  });

  it("an L2 node on a host without an L1 node, a host no node uses, and `main` declared again are refused", () => {
    const p = problemsOf(base({ hosts: { ...nodeB, spare: sshHost("203.0.113.12", { privateAddress: "10.0.0.12" }), main: sshHost("203.0.113.13", { privateAddress: "10.0.0.13" }) }, nodes: { l2: ["main", "node-b"] } }));
    expect(p).toContain('rpcstack:nodes.l2[1]: runs on host "node-b", where no L1 node runs (rpcstack:nodes.l1 places them on main): an L2 node follows an L1 node on its own host');
    expect(p).toContain("rpcstack:hosts.spare: no node is placed on it: rpcstack:nodes.l1 and nodes.l2 list the hosts nodes run on");
    expect(p).toContain("rpcstack:hosts.main: is the stack's own host (rpcstack:host); name further hosts otherwise");
  });

  it("further hosts need private addresses, theirs and the stack's host's, and the SSH key for an ssh host", () => {
    const noPrivate = problemsOf({ ...base({ hosts: { "node-b": sshHost("203.0.113.11") }, nodes: { l1: ["main", "node-b"], l2: ["main", "node-b"] } }), host: { kind: "local" }, sshPrivateKey: undefined });
    expect(noPrivate).toContain("rpcstack:hosts.node-b.privateAddress: is required");
    expect(noPrivate).toContain("rpcstack:host.privateAddress: is required once nodes run on further hosts (rpcstack:hosts): their health checks reach this host's readiness service there");
    expect(noPrivate).toContain("rpcstack:sshPrivateKey: is required when a host of rpcstack:hosts is of kind ssh: pulumi config set --secret sshPrivateKey < key");
  });

  it("devnet runs one node per chain, on this machine; an external L1 takes no L1 nodes", () => {
    const dev = problemsOf({ network: "devnet", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, nodes: { l1: ["main", "main"] } });
    expect(dev).toContain("rpcstack:nodes.l1: network devnet runs one node per chain: each geth --dev and each Starknet Devnet makes a chain of its own, so two would answer differently");
    const ext = problemsOf({ ...base(), l1: { external: { rpcHttp: "https://l1.example.net", rpcWs: "wss://l1.example.net" } }, nodes: { l1: ["main"] } });
    expect(ext).toContain("rpcstack:nodes.l1: does not apply with rpcstack:l1.external: the stack deploys no L1 node");
  });

  it("an aws further host's instance type is checked against its own tier", () => {
    const aws = { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX op", allowSshFrom: ["198.51.100.7/32"], privateAddress: "10.0.0.21", instanceType: "t3.micro" };
    expect(problemsOf(base({ hosts: { b: aws }, nodes: { l1: ["main", "b"], l2: ["main", "b"] } })).join("\n")).toMatch(/^rpcstack:hosts\.b\.instanceType: .*\(its tier is recommended\)$/m);
  });
});
