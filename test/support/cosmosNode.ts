/**
 * A real Cosmos SDK chain on loopback: wasmd (a Cosmos SDK v0.54 application on CometBFT v0.39,
 * built from its Go module by scripts/clients/build.sh) with one validator and a block about every
 * half second, serving Tendermint RPC (with its WebSocket at /websocket), the REST API and gRPC on
 * ports the test picks. Its genesis funds an account whose mnemonic the caller holds, for signing
 * with cosmjs. `follow` starts a second, non-validating node of the same chain that syncs from the
 * first over p2p: two nodes serving one chain.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientBinary } from "../../devtools/clients.js";
import { freePort, start, waitFor, type Child } from "./net.js";

export const COSMOS_DENOM = "stake";
export const COSMOS_PREFIX = "wasm";

export interface CosmosNode {
  readonly chainId: string;
  readonly moniker: string;
  /** Tendermint RPC (JSON-RPC on POST /, URI calls on GET). */
  readonly rpcUrl: string;
  readonly wsUrl: string;
  readonly restUrl: string;
  /** gRPC over h2c, as the gateway names its upstream. */
  readonly grpcUrl: string;
  readonly nodeId: string;
  readonly p2pPort: number;
  /** Its home folder (config, data). */
  readonly home: string;
  /** The latest height the node reports. */
  height(): Promise<number>;
  /** Stops the node; `start()` runs it again on the same home and ports. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its home. */
  remove(): Promise<void>;
  output(): string;
}

const wasmd = () => clientBinary("wasmd");
const run = (args: string[]) => execFileSync(wasmd(), args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** Rewrites `key = value` lines of a CometBFT config.toml (keys are unique in the file's sections used here). */
function setToml(file: string, values: Record<string, string>) {
  let text = readFileSync(file, "utf8");
  for (const [key, value] of Object.entries(values)) {
    const re = new RegExp(`^${key} = .*$`, "m");
    if (!re.test(text)) throw new Error(`${file} has no ${key}`);
    text = text.replace(re, `${key} = ${value}`);
  }
  writeFileSync(file, text);
}

/** Starts a node on `home`; removes `home` when it cannot. */
async function launch(home: string, chainId: string, moniker: string, peers: string): Promise<CosmosNode> {
  const [rpc, p2p, rest, grpc] = [await freePort(), await freePort(), await freePort(), await freePort()];
  let nodeId: string;
  try {
    setToml(join(home, "config/config.toml"), {
      // Blocks every half second: a test sees several in a few seconds.
      timeout_commit: '"500ms"',
      // Peers on 127.0.0.1 are refused by a strict address book.
      addr_book_strict: "false",
      pprof_laddr: '""',
    });
    nodeId = run(["comet", "show-node-id", "--home", home]).trim();
  } catch (e) {
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
  const args = [
    "start", "--home", home, "--log_level", "error",
    "--rpc.laddr", `tcp://127.0.0.1:${rpc}`, "--p2p.laddr", `tcp://127.0.0.1:${p2p}`,
    "--grpc.address", `127.0.0.1:${grpc}`, "--api.enable", "--api.address", `tcp://127.0.0.1:${rest}`,
    "--minimum-gas-prices", `0${COSMOS_DENOM}`, ...(peers ? ["--p2p.persistent_peers", peers] : []),
  ];
  const rpcUrl = `http://127.0.0.1:${rpc}`;
  let child: Child | undefined;
  let past = "";
  const height = async () => Number((await (await fetch(`${rpcUrl}/status`)).json()).result.sync_info.latest_block_height);
  const node: CosmosNode = {
    chainId, moniker, rpcUrl, nodeId, home, p2pPort: p2p,
    wsUrl: `ws://127.0.0.1:${rpc}/websocket`,
    restUrl: `http://127.0.0.1:${rest}`,
    grpcUrl: `http://127.0.0.1:${grpc}`,
    height,
    async start() {
      child = start(wasmd(), args);
      try {
        // Serving once it has a block and its REST and gRPC listeners are up.
        await waitFor(`wasmd ${moniker}`, async () => ((await height()) > 1 && (await fetch(`${node.restUrl}/cosmos/base/tendermint/v1beta1/node_info`)).ok ? true : undefined), 90_000);
      } catch (e) {
        const out = child.output();
        await child.stop();
        throw new Error(`${(e as Error).message}\n${out}`);
      }
    },
    async stop() {
      if (!child) return;
      past += child.output();
      await child.stop();
      child = undefined;
    },
    async remove() {
      await node.stop();
      rmSync(home, { recursive: true, force: true });
    },
    output: () => past + (child?.output() ?? ""),
  };
  try {
    await node.start();
  } catch (e) {
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
  return node;
}

/**
 * A single-validator chain whose genesis gives each of `funded` (bech32 addresses with the
 * `wasm` prefix) 10^12 of the staking denom.
 */
export async function startCosmosChain(funded: readonly string[], chainId = "rpcstack-1"): Promise<CosmosNode> {
  const home = mkdtempSync(join(tmpdir(), "rpcstack-wasmd-"));
  try {
    const keyring = ["--keyring-backend", "test", "--home", home];
    run(["init", "validator", "--chain-id", chainId, "--home", home]);
    run(["keys", "add", "validator", ...keyring]);
    const validator = run(["keys", "show", "validator", "-a", ...keyring]).trim();
    for (const address of [validator, ...funded]) run(["genesis", "add-genesis-account", address, `1000000000000${COSMOS_DENOM}`, "--home", home]);
    run(["genesis", "gentx", "validator", `1000000000${COSMOS_DENOM}`, "--chain-id", chainId, ...keyring]);
    run(["genesis", "collect-gentxs", "--home", home]);
  } catch (e) {
    rmSync(home, { recursive: true, force: true });
    const { stderr } = e as { stderr?: string };
    throw new Error(`wasmd could not make the chain's genesis: ${stderr ?? e}`);
  }
  return launch(home, chainId, "validator", "");
}

/** A full node of `of`'s chain (no validator key), peered with it and synced to its head. */
export async function follow(of: CosmosNode, moniker = "follower"): Promise<CosmosNode> {
  const home = mkdtempSync(join(tmpdir(), "rpcstack-wasmd-"));
  try {
    run(["init", moniker, "--chain-id", of.chainId, "--home", home]);
    copyFileSync(join(of.home, "config/genesis.json"), join(home, "config/genesis.json"));
  } catch (e) {
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
  const node = await launch(home, of.chainId, moniker, `${of.nodeId}@127.0.0.1:${of.p2pPort}`);
  try {
    await waitFor(`${moniker} synced to ${of.moniker}'s head`, async () => ((await node.height()) >= (await of.height()) - 1 ? true : undefined), 60_000);
  } catch (e) {
    await node.remove();
    throw e;
  }
  return node;
}
