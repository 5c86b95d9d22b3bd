import { describe, expect, it } from "vitest";
import { ConfigError, IMAGES, imageVersion, junoPollFlag } from "../config/index.js";
import { SPEC_VERSIONS } from "../config/releases.js";
import { TEST_PROJECT_KEYS } from "./harness.js";
import { loadRaw as load, problemsOf, SECRET_KEYS } from "./support/rawConfig.js";

type Raw = Record<string, unknown>;

// A Sepolia L1 + L2 needs ~1.1 TB (config/resources.ts): the recommended tier's 2 TB holds it.
const base = (): Raw => ({
  network: "testnet",
  tier: "recommended",
  host: { kind: "local" },
  projectKeys: TEST_PROJECT_KEYS,
});
const awsBase = (): Raw => ({
  ...base(),
  network: "mainnet",
  tier: "recommended",
  host: { kind: "aws", region: "eu-west-1", sshPublicKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDyX test", allowSshFrom: ["198.51.100.7/32"] },
  gateway: { domain: "rpc.example.com", acmeEmail: "ops@example.com" },
});

const set = (raw: Raw, path: string, value: unknown): Raw => {
  const copy = structuredClone(raw);
  const keys = path.split(".");
  let obj: any = copy;
  for (const k of keys.slice(0, -1)) obj = obj[k] ??= {};
  if (value === undefined) delete obj[keys.at(-1)!];
  else obj[keys.at(-1)!] = value;
  return copy;
};

describe("Juno's poll flag follows the release", () => {
  it.each([
    [[0, 7, 0], "--pending-poll-interval"],
    [[0, 11, 8], "--pending-poll-interval"],
    [[0, 15, 9], "--pending-poll-interval"],
    [[0, 16, 0], "--preconfirmed-poll-interval"],
    [[0, 17, 0], "--preconfirmed-poll-interval"],
    [[1, 0, 0], "--preconfirmed-poll-interval"],
  ] as const)("Juno v%j takes %s", (v, flag) => {
    expect(junoPollFlag(v)).toEqual({ flag });
  });
  it("a release before the flag existed cannot take the value in any form", () => {
    expect(junoPollFlag([0, 6, 2])).toEqual({ error: expect.stringMatching(/Juno v0\.6\.2 takes no poll-interval flag in any form/) });
  });
});

describe("defaults", () => {
  it("fills every default from the network module", () => {
    const c = load(base());
    expect(c.network.name).toBe("testnet");
    expect(c.network.l1.network).toBe("sepolia");
    expect(c.tier).toMatchObject({ cores: 4, memoryGiB: 16, diskGB: 2000, bandwidthMbps: 25 });
    expect(c.l1).toMatchObject({ history: "postmerge", external: false });
    expect(c.headroomMonths).toBe(6);
    expect(c.l1.executionImage).toMatch(/^ethereum\/client-go:v\d+\.\d+\.\d+$/);
    expect(c.l1.consensusImage).toMatch(/^sigp\/lighthouse:v\d+\.\d+\.\d+$/);
    expect(c.l1.checkpointSyncUrl).toBe("https://sepolia.beaconstate.info");
    expect(c.l2).toEqual({ client: "juno", image: IMAGES.juno, release: `v${imageVersion(IMAGES.juno)!.join(".")}`, pendingPollInterval: "3s", pollFlag: "--preconfirmed-poll-interval", rpcVersion: "v0_10", specVersions: SPEC_VERSIONS.juno[0].versions });
    expect(c.l1.executionRelease).toBe(`v${imageVersion(IMAGES.geth)!.join(".")}`);
    expect(c.l1.consensusRelease).toBe(`v${imageVersion(IMAGES.lighthouse)!.join(".")}`);
    expect(c.indexer).toMatchObject({ enabled: true, command: ["/indexer/indexer.sh"] });
    expect(c.retainData).toBe(true);
    expect(c.readiness).toEqual({ wait: true, timeoutMinutes: 60, toleranceBlocks: 6, l1ReferenceUrl: undefined, image: IMAGES.indexer });
    expect(c.gateway).toMatchObject({ chains: [], rateLimitPerSecond: 200, maxBodyKiB: 1024 });
  });

  it("an image pinned by digest runs the release l2.version names, with that release's flag", () => {
    const c = load(set(base(), "l2", { image: `nethermind/juno@sha256:${"a".repeat(64)}`, version: "v0.17.0" }));
    expect(c.l2).toMatchObject({ release: "v0.17.0", pollFlag: "--preconfirmed-poll-interval" });
    const agreeing = load(set(base(), "l2", { image: "nethermind/juno:v0.16.6", version: "0.16.6" }));
    expect(agreeing.l2).toMatchObject({ release: "v0.16.6", pollFlag: "--preconfirmed-poll-interval" });
  });

  it("uses mainnet defaults and the pathfinder image when asked", () => {
    // Pathfinder's 500 GB puts mainnet 20 GB over the 2 TB tier with 6 months of growth.
    const c = load(set(set(awsBase(), "l2", { client: "pathfinder" }), "host.diskGB", 2100));
    expect(c.l1.checkpointSyncUrl).toBe("https://mainnet.checkpoint.sigp.io");
    expect(c.network.chains.l2.chainId).toBe("STRK");
    expect(c.l2.image).toMatch(/pathfinder:v\d/);
    expect(c.tier.diskGB).toBe(2000);
  });

  it("keeps overrides and fills host defaults", () => {
    const c = load({ ...set(awsBase(), "retainData", false), l2: { image: "nethermind/juno:v0.17.3", pendingPollInterval: "1500ms" } });
    expect(c.retainData).toBe(false);
    expect(c.l2.image).toBe("nethermind/juno:v0.17.3");
    expect(c.l2.release).toBe("v0.17.3");
    expect(c.l2.pendingPollInterval).toBe("1500ms");
    const ssh = load({ ...base(), host: { kind: "ssh", address: "203.0.113.10", user: "ops" }, sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nx", gateway: { domain: "a.example.com", acmeEmail: "a@example.com" } });
    expect(ssh.host).toEqual({ kind: "ssh", address: "203.0.113.10", user: "ops", port: 22 });
  });
});

// Each case: a wrong value, the full key the error must name, and words the message must carry.
const rejections: [string, () => Raw, string, RegExp][] = [
  ["missing network", () => set(base(), "network", undefined), "rpcstack:network", /is required/],
  ["unknown network", () => set(base(), "network", "goerli"), "rpcstack:network", /one of mainnet, testnet.*goerli/],
  ["missing tier", () => set(base(), "tier", undefined), "rpcstack:tier", /is required/],
  ["unknown tier", () => set(base(), "tier", "huge"), "rpcstack:tier", /one of minimum, recommended/],
  ["missing host", () => set(base(), "host", undefined), "rpcstack:host", /is required/],
  ["host as a string", () => set(base(), "host", "local"), "rpcstack:host", /structured YAML/],
  ["unknown host kind", () => set(base(), "host", { kind: "gcp" }), "rpcstack:host.kind", /one of aws, ssh, local.*gcp/],
  ["host without kind", () => set(base(), "host", {}), "rpcstack:host.kind", /required/],
  ["local host with fields", () => set(base(), "host", { kind: "local", region: "x" }), "rpcstack:host.region", /not a known key/],
  ["aws without region", () => set(awsBase(), "host.region", undefined), "rpcstack:host.region", /is required/],
  ["disk size as text", () => set(base(), "host", { kind: "local", diskGB: "2TB" }), "rpcstack:host.diskGB", /must be an integer/],
  ["gp3 IOPS below its floor", () => set(awsBase(), "host.diskIops", 1000), "rpcstack:host.diskIops", /must be >= 3000/],
  ["disk IOPS on an ssh host", () => set(base(), "host", { kind: "ssh", address: "203.0.113.10", user: "ops", diskIops: 5000 }), "rpcstack:host.diskIops", /not a known key/],
  ["negative headroom", () => set(base(), "headroomMonths", -1), "rpcstack:headroomMonths", /must be >= 0/],
  ["unknown history mode", () => set(base(), "l1", { history: "none" }), "rpcstack:l1.history", /one of all, postmerge, postprague/],
  ["history on devnet", () => ({ network: "devnet", host: { kind: "local" }, projectKeys: TEST_PROJECT_KEYS, l1: { history: "all" } }), "rpcstack:l1.history", /does not apply to network devnet/],
  ["external L1 without WebSocket", () => set(base(), "l1", { external: { rpcHttp: "https://l1.example.net" } }), "rpcstack:l1.external.rpcWs", /is required/],
  ["external L1 over a wrong scheme", () => set(base(), "l1", { external: { rpcHttp: "ftp://u:secret-part@l1.example.net", rpcWs: "wss://l1.example.net" } }), "rpcstack:l1.external.rpcHttp", /must be a http:\/\/ or https:\/\/ URL \(got a value that is not shown\)/],
  ["external L1 beside an L1 image", () => set(base(), "l1", { external: { rpcHttp: "https://l1.example.net", rpcWs: "wss://l1.example.net" }, executionImage: "ethereum/client-go:v1.17.5" }), "rpcstack:l1.executionImage", /does not apply with rpcstack:l1\.external/],
  ["warning above the stop threshold", () => set(base(), "disk", { warnPercent: 96, stopPercent: 95 }), "rpcstack:disk.warnPercent", /must not be above rpcstack:disk\.stopPercent \(95\)/],
  ["warning alone above the default stop", () => set(base(), "disk", { warnPercent: 97 }), "rpcstack:disk.warnPercent", /must not be above rpcstack:disk\.stopPercent \(95, its default\)/],
  ["threshold over 100", () => set(base(), "disk", { stopPercent: 120 }), "rpcstack:disk.stopPercent", /must be <= 100/],
  ["relay switch as text", () => set(awsBase(), "gateway.relayExternalL1", "no"), "rpcstack:gateway.relayExternalL1", /must be a boolean/],
  ["aws bad region", () => set(awsBase(), "host.region", "Europe"), "rpcstack:host.region", /AWS region/],
  ["aws without ssh key", () => set(awsBase(), "host.sshPublicKey", undefined), "rpcstack:host.sshPublicKey", /is required/],
  ["aws bad ssh key", () => set(awsBase(), "host.sshPublicKey", "hello"), "rpcstack:host.sshPublicKey", /OpenSSH public key/],
  ["aws bad CIDR", () => set(awsBase(), "host.allowSshFrom", ["10.0.0.1"]), "rpcstack:host.allowSshFrom[0]", /CIDR/],
  ["aws without SSH sources", () => set(awsBase(), "host.allowSshFrom", undefined), "rpcstack:host.allowSshFrom", /at least one CIDR.*over SSH/],
  ["aws SSH from anywhere", () => set(awsBase(), "host.allowSshFrom", ["0.0.0.0/0"]), "rpcstack:host.allowSshFrom[0]", /whole internet/],
  ["aws instance below tier", () => set(awsBase(), "host.instanceType", "m7i.large"), "rpcstack:host.instanceType", /2 vCPUs, tier recommended needs 4.*8 GiB/],
  ["aws unknown instance type", () => set(awsBase(), "host.instanceType", "x9.huge"), "rpcstack:host.instanceType", /unknown instance type/],
  ["aws malformed instance type", () => set(awsBase(), "host.instanceType", "big"), "rpcstack:host.instanceType", /EC2 instance type/],
  ["ssh without address", () => ({ ...base(), host: { kind: "ssh", user: "ops" }, sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----" }), "rpcstack:host.address", /is required/],
  ["ssh without user", () => ({ ...base(), host: { kind: "ssh", address: "h.example.com" }, sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----" }), "rpcstack:host.user", /is required/],
  ["ssh bad port", () => ({ ...base(), host: { kind: "ssh", address: "h.example.com", user: "ops", port: 70000 }, sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----" }), "rpcstack:host.port", /<= 65535/],
  ["ssh bad address", () => ({ ...base(), host: { kind: "ssh", address: "not a host!", user: "ops" }, sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----" }), "rpcstack:host.address", /hostname or an IP/],
  ["ssh without private key", () => ({ ...base(), host: { kind: "ssh", address: "h.example.com", user: "ops" }, gateway: { domain: "a.example.com", acmeEmail: "a@example.com" } }), "rpcstack:sshPrivateKey", /is required when rpcstack:host.kind is ssh/],
  ["private key that is not one", () => ({ ...base(), host: { kind: "ssh", address: "h.example.com", user: "ops" }, sshPrivateKey: "hunter2" }), "rpcstack:sshPrivateKey", /private key.*not shown/],
  ["private key without ssh host", () => ({ ...base(), sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----" }), "rpcstack:sshPrivateKey", /only used when/],
  ["unpinned execution image", () => set(base(), "l1.executionImage", "ethereum/client-go:latest"), "rpcstack:l1.executionImage", /moving tag "latest"/],
  ["untagged consensus image", () => set(base(), "l1.consensusImage", "sigp/lighthouse"), "rpcstack:l1.consensusImage", /has no tag/],
  ["malformed image", () => set(base(), "l1.executionImage", "Not An Image"), "rpcstack:l1.executionImage", /image reference/],
  ["http checkpoint URL", () => set(base(), "l1.checkpointSyncUrl", "http://sepolia.beaconstate.info"), "rpcstack:l1.checkpointSyncUrl", /https:\/\/ URL/],
  ["unknown l1 key", () => set(base(), "l1.execImage", "x"), "rpcstack:l1.execImage", /not a known key.*executionImage/],
  ["unknown l2 client", () => set(base(), "l2.client", "papyrus"), "rpcstack:l2.client", /one of juno, pathfinder/],
  ["bad poll interval", () => set(base(), "l2.pendingPollInterval", "3 seconds"), "rpcstack:l2.pendingPollInterval", /duration like "3s"/],
  ["zero poll interval", () => set(base(), "l2.pendingPollInterval", "0s"), "rpcstack:l2.pendingPollInterval", /duration like "3s"/],
  ["Juno too old to follow Starknet 0.14.4", () => set(base(), "l2.image", "nethermind/juno:v0.15.9"), "rpcstack:l2.image", /Juno v0\.15\.9 is too old: .*Starknet 0\.14\.4.*minimum is v0\.16\.6 \(NethermindEth\/juno/],
  ["Juno before any poll flag", () => set(base(), "l2.image", "nethermind/juno:v0.6.2"), "rpcstack:l2.image", /v0\.6\.2 is too old.*minimum is v0\.16\.6/],
  ["Juno by digest without l2.version", () => set(base(), "l2.image", `nethermind/juno@sha256:${"a".repeat(64)}`), "rpcstack:l2.image", /cannot tell which Juno release .* set rpcstack:l2\.version/],
  ["Juno by digest with a too old l2.version", () => set(base(), "l2", { image: `nethermind/juno@sha256:${"a".repeat(64)}`, version: "v0.15.0" }), "rpcstack:l2.image", /Juno v0\.15\.0 is too old/],
  ["l2.version disagreeing with the tag", () => set(base(), "l2", { image: "nethermind/juno:v0.17.0", version: "v0.16.6" }), "rpcstack:l2.image", /tag .* says v0\.17\.0 but rpcstack:l2\.version says v0\.16\.6/],
  ["l2.version that is not a release", () => set(base(), "l2.version", "latest"), "rpcstack:l2.version", /release like "v0\.17\.0"/],
  ["Pathfinder too old", () => set(base(), "l2", { client: "pathfinder", image: "swmansion/pathfinder:v0.21.5" }), "rpcstack:l2.image", /Pathfinder v0\.21\.5 is too old/],
  ["geth too old for the live fork", () => set(base(), "l1.executionImage", "ethereum/client-go:v1.15.11"), "rpcstack:l1.executionImage", /geth v1\.15\.11 is too old: .*Fusaka/],
  ["Lighthouse too old for the live fork", () => set(base(), "l1.consensusImage", "sigp/lighthouse:v7.1.0"), "rpcstack:l1.consensusImage", /Lighthouse v7\.1\.0 is too old: .*Fusaka/],
  ["geth by digest without a release", () => set(base(), "l1.executionImage", `ethereum/client-go@sha256:${"b".repeat(64)}`), "rpcstack:l1.executionImage", /set rpcstack:l1\.executionVersion/],
  ["poll interval with pathfinder", () => set(base(), "l2", { client: "pathfinder", pendingPollInterval: "3s" }), "rpcstack:l2.pendingPollInterval", /Juno only/],
  ["a spec version the Juno release does not serve", () => set(base(), "l2.rpcVersion", "v0_7"), "rpcstack:l2.rpcVersion", /^rpcstack:l2\.rpcVersion: v0_7 is not served by juno \(Juno v0\.17\.0, which serves v0_8, v0_9, v0_10\)$/],
  ["a spec version the nodes of the layer do not serve", () => set(set(base(), "nodes", { l2: ["main", "main"] }), "l2.rpcVersion", "v0_7"), "rpcstack:l2.rpcVersion", /v0_7 is not served by juno, juno-2 \(Juno v0\.17\.0, which serves v0_8, v0_9, v0_10\)/],
  ["a spec version no Pathfinder release serves", () => set(base(), "l2", { client: "pathfinder", rpcVersion: "v0_11" }), "rpcstack:l2.rpcVersion", /v0_11 is not served by pathfinder \(Pathfinder v0\.24\.1, which serves v0_6, v0_7, v0_8, v0_9, v0_10\)/],
  ["a spec version not spelled as the nodes do", () => set(base(), "l2.rpcVersion", "0.9"), "rpcstack:l2.rpcVersion", /spec version as the nodes name it, like "v0_9"/],
  ["indexer enabled not boolean", () => set(base(), "indexer.enabled", "yes"), "rpcstack:indexer.enabled", /must be a boolean/],
  ["indexer unpinned", () => set(base(), "indexer.image", "node"), "rpcstack:indexer.image", /has no tag/],
  ["indexer empty command", () => set(base(), "indexer.command", []), "rpcstack:indexer.command", /at least 1 item/],
  ["indexer command not strings", () => set(base(), "indexer.command", [1]), "rpcstack:indexer.command[0]", /must be a string/],
  ["remote host without domain", () => set(awsBase(), "gateway.domain", undefined), "rpcstack:gateway.domain", /required when rpcstack:host.kind is aws/],
  ["bad domain", () => set(awsBase(), "gateway.domain", "https://rpc.example.com"), "rpcstack:gateway.domain", /DNS hostname/],
  ["domain without email", () => set(awsBase(), "gateway.acmeEmail", undefined), "rpcstack:gateway.acmeEmail", /required with rpcstack:gateway.domain/],
  ["bad email", () => set(awsBase(), "gateway.acmeEmail", "ops"), "rpcstack:gateway.acmeEmail", /email address/],
  ["chain path uppercase", () => set(base(), "gateway.chains", [{ path: "Cosmos", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].path", /lowercase/],
  ["chain id lowercase", () => set(base(), "gateway.chains", [{ path: "c", chainId: "c", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].chainId", /uppercase/],
  ["chain kind unknown", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "solana", upstreams: { rpcHttp: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].kind", /evm, starknet, cosmos/],
  ["chain without upstreams", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm" }]), "rpcstack:gateway.chains[0].upstreams", /is required/],
  ["chain ws upstream over http", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net", rpcWs: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].upstreams.rpcWs", /ws:\/\/ or wss:\/\//],
  ["cosmos chain without rest", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "cosmos", upstreams: { rpcHttp: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].upstreams.rest", /required for a cosmos chain/],
  ["evm chain with hostnames", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" }, hostnames: { rest: "c.example.com" } }]), "rpcstack:gateway.chains[0].hostnames", /cosmos chains, not evm/],
  ["grpc hostname without grpc upstream", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "cosmos", upstreams: { rpcHttp: "https://a.example.net", rest: "https://b.example.net" }, hostnames: { grpc: "g.example.com" } }]), "rpcstack:gateway.chains[0].hostnames.grpc", /upstreams.grpc/],
  ["replica lacking an interface", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "cosmos", upstreams: { rpcHttp: "https://a.example.net", rest: "https://a.example.net" }, replicas: [{ rpcHttp: "https://b.example.net" }] }]), "rpcstack:gateway.chains[0].replicas[0]", /lacks rest: every replica names the interfaces upstreams names \(rpcHttp, rest\)/],
  ["replica with an interface upstreams lacks", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" }, replicas: [{ rpcHttp: "https://b.example.net", rpcWs: "wss://b.example.net" }] }]), "rpcstack:gateway.chains[0].replicas[0]", /names rpcWs, which upstreams does not/],
  ["replica at another path", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net/rpc" }, replicas: [{ rpcHttp: "https://b.example.net/other" }] }]), "rpcstack:gateway.chains[0].replicas[0].rpcHttp", /must have the scheme and path of upstreams.rpcHttp \(https:\/\/...\/rpc\)/],
  ["replica at the first node's address", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" }, replicas: [{ rpcHttp: "https://a.example.net/" }] }]), "rpcstack:gateway.chains[0].replicas[0].rpcHttp", /a.example.net is already a node of this chain/],
  ["replicas empty", () => set(base(), "gateway.chains", [{ path: "c", chainId: "C", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" }, replicas: [] }]), "rpcstack:gateway.chains[0].replicas", /at least 1/],
  ["chain path of a built-in chain", () => set(base(), "gateway.chains", [{ path: "strks", chainId: "OTHER", kind: "starknet", upstreams: { rpcHttp: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].path", /built-in STRKS/],
  ["chain id of a built-in chain", () => set(base(), "gateway.chains", [{ path: "other", chainId: "SEP1", kind: "evm", upstreams: { rpcHttp: "https://a.example.net" } }]), "rpcstack:gateway.chains[0].chainId", /built-in \/gateway\/sep1/],
  ["duplicate chain paths", () => set(base(), "gateway.chains", [1, 2].map((n) => ({ path: "dup", chainId: `C${n}`, kind: "evm", upstreams: { rpcHttp: "https://a.example.net" } }))), "rpcstack:gateway.chains[1].path", /already used by gateway.chains\[0\]/],
  ["duplicate hostnames", () => set(base(), "gateway.chains", [1, 2].map((n) => ({ path: `c${n}`, chainId: `C${n}`, kind: "cosmos", upstreams: { rpcHttp: "https://a.example.net", rest: "https://a.example.net" }, hostnames: { rest: "same.example.com" } }))), "rpcstack:gateway.chains[1].hostnames.rest", /already used/],
  ["rate limit zero", () => set(base(), "gateway.rateLimitPerSecond", 0), "rpcstack:gateway.rateLimitPerSecond", />= 1/],
  ["body limit not a number", () => set(base(), "gateway.maxBodyKiB", "1MB"), "rpcstack:gateway.maxBodyKiB", /must be an integer/],
  ["gateway connections too few", () => set(base(), "gateway.maxConnections", 10), "rpcstack:gateway.maxConnections", />= 100/],
  ["gateway image unpinned", () => set(base(), "gateway.image", "haproxy:latest"), "rpcstack:gateway.image", /moving tag "latest"/],
  ["certbot image not an image", () => set(base(), "gateway.certbotImage", "Certbot Image"), "rpcstack:gateway.certbotImage", /must be an image reference/],
  ["readiness image without tag", () => set(base(), "readiness.image", "node"), "rpcstack:readiness.image", /has no tag/],
  ["unknown gateway key", () => set(base(), "gateway.port", 8443), "rpcstack:gateway.port", /not a known key/],
  ["CORS origin with a path", () => set(base(), "gateway.corsOrigins", ["https://app.example.com/x"]), "rpcstack:gateway.corsOrigins[0]", /origins like/],
  ["batch limit over 4096", () => set(base(), "gateway.maxBatch", 5000), "rpcstack:gateway.maxBatch", /<= 4096/],
  ["wrong-key limit negative", () => set(base(), "gateway.wrongKeysPerMinute", -1), "rpcstack:gateway.wrongKeysPerMinute", />= 0/],
  ["connections per address zero", () => set(base(), "gateway.maxConnectionsPerAddress", 0), "rpcstack:gateway.maxConnectionsPerAddress", />= 1/],
  ["WebSockets per key zero", () => set(base(), "gateway.wsMaxConnectionsPerKey", 0), "rpcstack:gateway.wsMaxConnectionsPerKey", />= 1/],
  ["filters per key zero", () => set(base(), "gateway.filtersPerKey", 0), "rpcstack:gateway.filtersPerKey", />= 1/],
  ["WebSocket idle timeout too short", () => set(base(), "gateway.wsIdleTimeoutSeconds", 1), "rpcstack:gateway.wsIdleTimeoutSeconds", />= 10/],
  ["method name with a dot", () => set(base(), "gateway.methodPolicy", { sep1: { allowMethods: ["debug.trace"] } }), "rpcstack:gateway.methodPolicy.sep1.allowMethods[0]", /method names or families/],
  ["method policy for an unknown chain", () => set(base(), "gateway.methodPolicy", { doge: { denyMethods: ["eth_sign"] } }), "rpcstack:gateway.methodPolicy.doge", /not a chain this gateway serves/],
  ["cache budget below 1 MiB", () => set(base(), "gateway.cache", { maxBytes: 1000 }), "rpcstack:gateway.cache.maxBytes", />= 1048576/],
  ["cache object limit below 2 MiB", () => set(base(), "gateway.cache", { maxObjectBytes: 1048576 }), "rpcstack:gateway.cache.maxObjectBytes", />= 2097152/],
  ["cache object limit over the budget", () => set(base(), "gateway.cache", { maxBytes: 4194304, maxObjectBytes: 8388608 }), "rpcstack:gateway.cache.maxObjectBytes", /larger than rpcstack:gateway.cache.maxBytes/],
  ["cache switch for an unknown chain", () => set(base(), "gateway.cache", { chains: { doge: false } }), "rpcstack:gateway.cache.chains.doge", /not a chain this gateway serves/],
  ["cache switch not boolean", () => set(base(), "gateway.cache", { chains: { sep1: "off" } }), "rpcstack:gateway.cache.chains.sep1", /must be a boolean/],
  ["unknown cache key", () => set(base(), "gateway.cache", { ttl: 5 }), "rpcstack:gateway.cache.ttl", /not a known key/],
  ["guessable project key", () => set(base(), "projectKeys", [{ name: "a", key: "a".repeat(32) }]), "rpcstack:projectKeys[0].key", /too easy to guess/],
  ["project key of two characters", () => set(base(), "projectKeys", [{ name: "a", key: "ab".repeat(20) }]), "rpcstack:projectKeys[0].key", /too easy to guess/],
  ["no project keys", () => set(base(), "projectKeys", undefined), "rpcstack:projectKeys", /is required/],
  ["empty project keys", () => set(base(), "projectKeys", []), "rpcstack:projectKeys", /at least 1 item/],
  ["short project key", () => set(base(), "projectKeys", [{ name: "a", key: "short" }]), "rpcstack:projectKeys[0].key", /32 or more URL-safe.*not shown/],
  ["project key without name", () => set(base(), "projectKeys", [{ key: "k".repeat(40) }]), "rpcstack:projectKeys[0].name", /is required/],
  ["duplicate project key", () => set(base(), "projectKeys", [{ name: "a", key: "k".repeat(40) }, { name: "b", key: "k".repeat(40) }]), "rpcstack:projectKeys[1].key", /same key as projectKeys\[0\]/],
  ["duplicate project key name", () => set(base(), "projectKeys", [{ name: "a", key: "k".repeat(40) }, { name: "a", key: "j".repeat(40) }]), "rpcstack:projectKeys[1].name", /already used/],
  ["retainData not boolean", () => set(base(), "retainData", "keep"), "rpcstack:retainData", /structured YAML/],
  ["retainData a number", () => set(base(), "retainData", 1), "rpcstack:retainData", /must be a boolean/],
  ["readiness wait not boolean", () => set(base(), "readiness.wait", "no"), "rpcstack:readiness.wait", /must be a boolean/],
  ["readiness timeout zero", () => set(base(), "readiness.timeoutMinutes", 0), "rpcstack:readiness.timeoutMinutes", />= 1/],
  ["readiness timeout fraction", () => set(base(), "readiness.timeoutMinutes", 1.5), "rpcstack:readiness.timeoutMinutes", /must be an integer/],
  ["readiness tolerance negative", () => set(base(), "readiness.toleranceBlocks", -1), "rpcstack:readiness.toleranceBlocks", />= 0/],
  ["readiness reference over http", () => set(base(), "readiness.l1ReferenceUrl", "http://eth.example.net"), "rpcstack:readiness.l1ReferenceUrl", /https:\/\/ URL/],
  ["geolocation with spaces", () => set(base(), "geolocation", "North America"), "rpcstack:geolocation", /region label/],
  ["unknown top-level key", () => set(base(), "gatewy", "x"), "rpcstack:gatewy", /not a known key/],
];

describe("every schema and cross-field rule rejects a wrong value, naming the key", () => {
  it.each(rejections)("%s", (_label, make, key, words) => {
    const problems = problemsOf(make());
    const hit = problems.find((p) => p.startsWith(`${key}: `));
    expect(hit, `no problem names ${key}; got:\n${problems.join("\n")}`).toBeDefined();
    expect(hit).toMatch(words);
  });
});

describe("secrets", () => {
  it("rejects project keys or an SSH key set in clear text", () => {
    const problems = problemsOf(
      { ...base(), host: { kind: "ssh", address: "h.example.com", user: "ops" }, sshPrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----", gateway: { domain: "a.example.com", acmeEmail: "a@example.com" } },
      new Set(),
    );
    expect(problems).toContain("rpcstack:projectKeys: must be set as a secret: pulumi config set --secret projectKeys ...");
    expect(problems.some((p) => p.startsWith("rpcstack:sshPrivateKey: must be set as a secret"))).toBe(true);
  });

  it("never repeats a project key in an error", () => {
    const secret = "x".repeat(31) + "!";
    const problems = problemsOf(set(base(), "projectKeys", [{ name: "a", key: secret }]));
    expect(problems.join("\n")).not.toContain(secret);
  });
});

describe("all problems at once", () => {
  it("reports schema and cross-field problems together, one line each", () => {
    const err = (() => {
      try {
        load({ network: "goerli", tier: "minimum", host: { kind: "aws", region: "eu-west-1", sshPublicKey: "bad" }, l2: { image: "nethermind/juno:latest" }, projectKeys: TEST_PROJECT_KEYS });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^rpcstack:network: /),
        expect.stringMatching(/^rpcstack:host.sshPublicKey: /),
        expect.stringMatching(/^rpcstack:l2.image: .*moving tag/),
        expect.stringMatching(/^rpcstack:gateway.domain: /),
      ]),
    );
    expect(err!.message.split("\n")).toHaveLength(err!.problems.length + 1);
  });
});

describe("gateway.cache", () => {
  it("is on by default with a byte budget per tier, and switches off per chain", () => {
    expect(load(base()).gateway.cache).toEqual({ enabled: true, maxBytes: 256 * 1024 * 1024, maxObjectBytes: 4 * 1024 * 1024, chains: {} });
    // The minimum tier holds a Starknet node beside an external L1 (a Sepolia L1 does not fit it).
    const external = { rpcHttp: "https://l1.example.com", rpcWs: "wss://l1.example.com" };
    const small = load({ ...base(), tier: "minimum", l1: { external } }, new Set([...SECRET_KEYS, "l1"]));
    expect(small.gateway.cache.maxBytes).toBe(64 * 1024 * 1024);
    const off = load(set(base(), "gateway.cache", { maxBytes: 8388608, chains: { sep1: false } })).gateway.cache;
    expect(off).toMatchObject({ maxBytes: 8388608, chains: { sep1: false } });
  });
});
