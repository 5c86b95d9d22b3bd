import { describe, expect, it, vi } from "vitest";
import { IMAGES } from "../config/index.js";
import { runProgram, type ProgramRun, type RecordedResource } from "./harness.js";

const CONTAINER = "docker:index/container:Container";
const VOLUME = "docker:index/volume:Volume";

const container = (run: ProgramRun, service: string) => run.one(CONTAINER, service);
const nameOf = (run: ProgramRun, urn: string) => run.byUrn(urn)?.name;
const publishedPorts = (c: RecordedResource) =>
  (c.inputs.ports ?? []).map((p: any) => `${p.ip}:${p.external}->${p.internal}/${p.protocol}`).sort();

describe.each([
  { stack: "testnet" as const, net: "sepolia", checkpoint: "https://sepolia.beaconstate.info", l2net: "sepolia" },
  { stack: "mainnet" as const, net: "mainnet", checkpoint: "https://mainnet.checkpoint.sigp.io", l2net: "mainnet" },
])("$stack nodes", ({ stack, net, checkpoint, l2net }) => {
  it("geth: pinned image, network flag, eth/net/web3 only on HTTP and WS, engine API with the JWT", async () => {
    const run = await runProgram({ stack });
    const geth = container(run, "rpcstack-l1-geth");
    expect(geth.inputs.image).toBe(IMAGES.geth);
    expect(geth.inputs.name).toBe("rpcstack-geth");
    const args: string[] = geth.inputs.command;
    expect(args[0]).toBe(`--${net}`);
    expect(args).toEqual(
      expect.arrayContaining([
        "--http", "--http.addr=0.0.0.0", "--http.port=8545", "--http.api=eth,net,web3",
        "--ws", "--ws.addr=0.0.0.0", "--ws.port=8546", "--ws.api=eth,net,web3",
        "--authrpc.addr=0.0.0.0", "--authrpc.port=8551", "--authrpc.vhosts=*", "--authrpc.jwtsecret=/jwt/jwt.hex",
      ]),
    );
    expect(args.join(" ")).not.toMatch(/admin|debug|personal|txpool/);
    expect(publishedPorts(geth)).toEqual(["0.0.0.0:30303->30303/tcp", "0.0.0.0:30303->30303/udp", "127.0.0.1:8545->8545/tcp", "127.0.0.1:8546->8546/tcp"]);
    expect(geth.inputs.volumes).toEqual(
      expect.arrayContaining([
        { volumeName: `rpcstack-${net}-geth`, containerPath: "/root/.ethereum", readOnly: false },
        { volumeName: `rpcstack-${net}-jwt`, containerPath: "/jwt", readOnly: true },
      ]),
    );
    expect(geth.inputs.healthcheck.tests.join(" ")).toContain('"method":"eth_blockNumber"');
    expect(geth.inputs.stopTimeout).toBe(180);
    expect(geth.inputs.networksAdvanced).toEqual([{ name: "rpcstack", aliases: ["geth"] }]);
    expect(geth.dependencies.map((u) => nameOf(run, u))).toContain("rpcstack-l1-jwt-init");
  });

  it("the JWT secret is made on the host by a one-shot container, never in state", async () => {
    const run = await runProgram({ stack });
    const init = container(run, "rpcstack-l1-jwt-init");
    expect(init.inputs.entrypoints).toEqual(["/bin/sh", "-c"]);
    expect(init.inputs.command[0]).toContain("/dev/urandom");
    expect(init.inputs.command[0]).toContain("if [ ! -s /jwt/jwt.hex ]");
    expect(init.inputs.attach).toBe(true);
    expect(init.inputs.mustRun).toBe(false);
    // No resource input anywhere holds a 64-hex-digit value.
    expect(JSON.stringify(run.resources.map((r) => r.inputs))).not.toMatch(/\b[0-9a-f]{64}\b/);
  });

  it("lighthouse: checkpoint sync, engine endpoint and JWT, p2p published, API and metrics private", async () => {
    const run = await runProgram({ stack });
    const lh = container(run, "rpcstack-l1-lighthouse");
    expect(lh.inputs.image).toBe(IMAGES.lighthouse);
    expect(lh.inputs.command.slice(0, 3)).toEqual(["lighthouse", "bn", `--network=${net}`]);
    expect(lh.inputs.command).toEqual(
      expect.arrayContaining([
        `--checkpoint-sync-url=${checkpoint}`, "--execution-endpoint=http://geth:8551", "--execution-jwt=/jwt/jwt.hex",
        "--http", "--http-address=0.0.0.0", "--metrics", "--metrics-port=5054",
      ]),
    );
    expect(publishedPorts(lh)).toEqual(["0.0.0.0:9000->9000/tcp", "0.0.0.0:9000->9000/udp", "0.0.0.0:9001->9001/udp"]);
    expect(lh.inputs.healthcheck.tests.join(" ")).toContain("/eth/v1/node/health");
  });

  it("juno: the guide's flags, the poll interval 3s as --preconfirmed-poll-interval, RPC on loopback only", async () => {
    const run = await runProgram({ stack });
    const juno = container(run, "rpcstack-l2-juno");
    expect(juno.inputs.image).toBe(IMAGES.juno);
    const args: string[] = juno.inputs.command;
    expect(args).toEqual(
      expect.arrayContaining([
        "--http", "--http-port=6060", "--http-host=0.0.0.0", "--ws", "--ws-host=0.0.0.0",
        "--db-path=/var/lib/juno", `--network=${l2net}`, "--eth-node=ws://geth:8546",
      ]),
    );
    // Juno v0.16.0 removed --pending-poll-interval; an unknown flag stops it at start.
    expect(args).not.toContain("--pending-poll-interval");
    expect(args.slice(args.indexOf("--preconfirmed-poll-interval"), args.indexOf("--preconfirmed-poll-interval") + 2)).toEqual(["--preconfirmed-poll-interval", "3s"]);
    expect(publishedPorts(juno)).toEqual(["127.0.0.1:6060->6060/tcp"]);
    expect(juno.inputs.volumes).toEqual([{ volumeName: `rpcstack-${l2net}-juno`, containerPath: "/var/lib/juno", readOnly: false }]);
    expect(juno.inputs.healthcheck.tests.join(" ")).toContain('"method":"starknet_chainId"');
    expect(juno.inputs.wait).toBe(true);
    // Juno v0.17's first start migrates the database for ~8 minutes: the wait must outlast it.
    expect(juno.inputs.healthcheck.startPeriod).toBe("900s");
    expect(juno.inputs.waitTimeout).toBeGreaterThanOrEqual(900 + 5 * 30);
    expect(juno.dependencies.map((u) => nameOf(run, u))).toContain("rpcstack-l1-geth");
  });

  it("indexer: runs /indexer/indexer.sh with the L2 URL, after the L2 node", async () => {
    const run = await runProgram({ stack });
    const idx = container(run, "rpcstack-indexer-indexer");
    expect(idx.inputs.command).toEqual(["/indexer/indexer.sh"]);
    expect(idx.inputs.envs).toContain("L2_RPC_URL=http://juno:6060/v0_10");
    expect(idx.inputs.uploads.map((u: any) => [u.file, u.permissions])).toEqual([["/indexer/indexer.sh", "0755"], ["/indexer/indexer.mjs", "0644"]]);
    expect(idx.inputs.uploads[0].content).toContain("exec node /indexer/indexer.mjs");
    expect(idx.inputs.ports).toEqual([]);
    expect(idx.dependencies.map((u) => nameOf(run, u))).toContain("rpcstack-l2-juno");
    expect(idx.parent).toBe(run.one("rpcstack:index:Indexer").urn);
  });
});

describe("configured variants", () => {
  it("pathfinder: ws L1 URL, network name, monitor port apart from 9000 and 9545, runs as 1000", async () => {
    const run = await runProgram({ stack: "testnet", config: { l2: { client: "pathfinder" } } });
    const pf = container(run, "rpcstack-l2-pathfinder");
    expect(pf.inputs.image).toBe("swmansion/pathfinder:v0.24.1");
    expect(pf.inputs.envs).toEqual(
      expect.arrayContaining([
        "PATHFINDER_ETHEREUM_API_URL=ws://geth:8546",
        "PATHFINDER_NETWORK=sepolia-testnet",
        "PATHFINDER_HTTP_RPC_ADDRESS=0.0.0.0:9545",
        "PATHFINDER_MONITOR_ADDRESS=0.0.0.0:9099",
        "PATHFINDER_WEBSOCKET_ENABLED=true",
      ]),
    );
    expect(pf.inputs.user).toBe("1000:1000");
    expect(publishedPorts(pf)).toEqual(["127.0.0.1:9545->9545/tcp"]);
    expect(pf.inputs.healthcheck.tests.join(" ")).toContain("GET /ready ");
    expect(container(run, "rpcstack-indexer-indexer").inputs.envs).toContain("L2_RPC_URL=http://pathfinder:9545/rpc/v0_10");
  });

  it("a custom poll interval and an older supported Juno pin follow the config, and pulumi up says which flag it used", async () => {
    const said: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((...xs: unknown[]) => void said.push(xs.join(" ")));
    let run;
    try {
      run = await runProgram({ stack: "testnet", config: { l2: { image: "nethermind/juno:v0.16.6", pendingPollInterval: "1500ms" } } });
    } finally {
      spy.mockRestore();
    }
    const args: string[] = container(run, "rpcstack-l2-juno").inputs.command;
    expect(args.slice(-2)).toEqual(["--preconfirmed-poll-interval", "1500ms"]);
    expect(container(run, "rpcstack-l2-juno").inputs.image).toBe("nethermind/juno:v0.16.6");
    const lines = said.filter((l) => l.includes("pendingPollInterval"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("Juno v0.16.6: rpcstack:l2.pendingPollInterval 1500ms passed as --preconfirmed-poll-interval");
  });

  it("a Juno pinned by digest runs with the flag of the release l2.version names", async () => {
    const image = `nethermind/juno@sha256:${"c".repeat(64)}`;
    const run = await runProgram({ stack: "testnet", config: { l2: { image, version: "v0.17.0" } } });
    const juno = container(run, "rpcstack-l2-juno");
    expect(juno.inputs.image).toBe(image);
    expect(juno.inputs.command.slice(-2)).toEqual(["--preconfirmed-poll-interval", "3s"]);
  });

  it("indexer disabled: no indexer container", async () => {
    const run = await runProgram({ stack: "testnet", config: { indexer: { enabled: false } } });
    expect(run.byType(CONTAINER).map((c) => c.name)).not.toContain("rpcstack-indexer-indexer");
    expect(run.byType("rpcstack:index:Indexer")).toHaveLength(0);
  });

  it("retainData false: volumes are deleted with the stack", async () => {
    const run = await runProgram({ stack: "testnet", config: { retainData: false } });
    expect(run.byType(VOLUME).every((v) => !v.retainOnDelete)).toBe(true);
  });
});

// Stack-wide invariants: each would catch a regression anywhere in the program.
const PRIVATE_PORTS = new Set([8545, 8546, 8551, 6060, 6061, 9090, 5052, 5054, 9545, 9099, 5050, 8080]);
const PINNED = /^[^:@]+(:[^:@/]+)?(:(?!latest$)[\w][\w.-]*)(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$/;

describe.each(["local", "testnet", "mainnet"] as const)("stack-wide invariants on %s", (stack) => {
  it("no RPC, engine, metrics or health port is published on a public interface", async () => {
    const run = await runProgram({ stack });
    const offenders = run.byType(CONTAINER).flatMap((c) =>
      (c.inputs.ports ?? [])
        .filter((p: any) => PRIVATE_PORTS.has(p.internal) && p.ip !== "127.0.0.1")
        .map((p: any) => `${c.name} ${p.ip}:${p.external}->${p.internal}`),
    );
    expect(offenders).toEqual([]);
    // Every published port names its interface: none falls back to Docker's 0.0.0.0 default unseen.
    expect(run.byType(CONTAINER).flatMap((c) => (c.inputs.ports ?? []).filter((p: any) => !p.ip))).toEqual([]);
  });

  it("no two services claim the same host port", async () => {
    const run = await runProgram({ stack });
    const claims = run.byType(CONTAINER).flatMap((c) => (c.inputs.ports ?? []).map((p: any) => `${p.external}/${p.protocol}`));
    expect(claims.length).toBeGreaterThan(0);
    expect(new Set(claims).size).toBe(claims.length);
  });

  it("every image is pinned", async () => {
    const run = await runProgram({ stack });
    const images = run.byType("docker:index/remoteImage:RemoteImage").map((i) => i.inputs.name as string);
    expect(images.length).toBeGreaterThanOrEqual(4);
    expect(images.filter((i) => !PINNED.test(i))).toEqual([]);
    for (const c of run.byType(CONTAINER)) expect(images).toContain(c.inputs.image);
  });

  it("every data volume is retained and mounted", async () => {
    const run = await runProgram({ stack });
    const volumes = run.byType(VOLUME);
    expect(volumes.map((v) => v.retainOnDelete)).toEqual(volumes.map(() => true));
    const mounted = new Set(run.byType(CONTAINER).flatMap((c) => c.inputs.volumes.map((v: any) => v.volumeName)));
    expect(volumes.map((v) => v.inputs.name).filter((n) => !mounted.has(n))).toEqual([]);
    expect(run.byType(CONTAINER).every((c) => c.inputs.removeVolumes === false)).toBe(true);
  });

  it("every container runs on the host's Docker provider, inside a component", async () => {
    const run = await runProgram({ stack });
    const provider = run.one("pulumi:providers:docker");
    for (const r of [...run.byType(CONTAINER), ...run.byType(VOLUME), ...run.byType("docker:index/network:Network")]) {
      expect(r.provider?.startsWith(provider.urn)).toBe(true);
      expect(r.parent).toMatch(/rpcstack:index:(L1Node|L2Node|Indexer|SyncReadiness|Gateway|Monitoring)/);
    }
  });
});
