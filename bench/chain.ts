/**
 * The benches' chain: real geth (the stack's pin, built by scripts/clients/build.sh) on blocks that
 * cost what mainnet's cost (bench/chainMaker.ts makes them), made once per machine and cached, then
 * started as a copy per bench run.
 *
 * At a bench run the copy is started with --dev.period, so the head moves as on a live chain (the
 * blocks it adds then are empty) and the dev beacon finalizes every 32nd block.
 *
 *   npx tsx bench/chain.ts [--help]   makes the chain if the cache lacks it and says where it is
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { AbiCoder, Interface, id } from "ethers";
import { clientBinary } from "../devtools/clients.js";
import { jsonRpc, waitFor } from "../devtools/net.js";
import { CHAIN_RECIPE, makeChain, type BenchChain } from "./chainMaker.js";
import { gethRelease, pickPorts, settle, startGeth } from "./geth.js";

export { CHAIN_RECIPE, type BenchChain } from "./chainMaker.js";

/** The Trade event's topic, for eth_getLogs by pair. */
export const TRADE_TOPIC = id("Trade(address,uint256,uint256,uint256)");
export const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");
/** balanceOf(address), for eth_call. */
export const balanceOfData = (holder: string) => new Interface(["function balanceOf(address) view returns (uint256)"]).encodeFunctionData("balanceOf", [holder]);
/** A pair number as a log topic. */
export const pairTopic = (pair: number) => AbiCoder.defaultAbiCoder().encode(["uint256"], [pair]);

const cacheRoot = () => process.env.RPCSTACK_CACHE || join(homedir(), ".cache", "rpcstack");

/** Where this geth's chain of this recipe lives (its `data` folder and `chain.json`). */
export function chainDir(geth: string): string {
  return join(cacheRoot(), "bench", "chain", `geth-${gethRelease(geth)}-recipe-${CHAIN_RECIPE.version}`);
}

/** The chain, made first if the cache lacks it (a few minutes, once per machine and geth release). */
export async function benchChain(log: (s: string) => void = console.log): Promise<{ dir: string; chain: BenchChain }> {
  const geth = clientBinary("geth", log);
  const dir = chainDir(geth);
  if (!existsSync(join(dir, "chain.json"))) {
    log(`bench chain: making ${CHAIN_RECIPE.blocks} blocks of ${CHAIN_RECIPE.minTxs}-${CHAIN_RECIPE.maxTxs} transactions with geth ${gethRelease(geth)} (once; cached in ${dir})`);
    const tmp = `${dir}.making`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    const chain = await makeChain(geth, tmp, log);
    writeFileSync(join(tmp, "chain.json"), JSON.stringify(chain, null, 2) + "\n");
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  }
  return { dir, chain: JSON.parse(readFileSync(join(dir, "chain.json"), "utf8")) };
}

export interface GethNode {
  readonly url: string;
  readonly wsUrl: string;
  readonly pid: number;
  readonly version: string;
  stop(): Promise<void>;
}

/** A copy of the cached chain served by geth, its head moving every `periodSeconds`. */
export async function startChainNode(work: string, periodSeconds: number, log: (s: string) => void = console.log): Promise<{ node: GethNode; chain: BenchChain }> {
  const { dir, chain } = await benchChain(log);
  const geth = clientBinary("geth", log);
  const datadir = join(work, "geth");
  // A copy: the blocks a run adds stay out of the cached chain, so every run starts from the same one.
  execFileSync("cp", ["-a", join(dir, "data"), datadir]);
  const ports = await pickPorts();
  const child = startGeth(geth, datadir, periodSeconds, CHAIN_RECIPE.gasLimit, ports);
  const url = `http://127.0.0.1:${ports.http}`;
  try {
    await waitFor("geth on the bench chain", async () => ((parseInt(await jsonRpc(url, "eth_blockNumber"), 16) >= chain.lastBlock) ? true : undefined), 60_000);
  } catch (e) {
    await child.stop();
    throw new Error(`${(e as Error).message}\n${child.output().slice(-3000)}`);
  }
  const settled = await settle(child.proc.pid!);
  log(`bench chain: geth settled ${settled.seconds} s after its start (${settled.cpuMs} ms of CPU meanwhile)`);
  return { node: { url, wsUrl: `ws://127.0.0.1:${ports.ws}`, pid: child.proc.pid!, version: `geth ${chain.geth}`, stop: () => child.stop() }, chain };
}

const USAGE = `usage: npx tsx bench/chain.ts [--help]
Makes the benches' geth chain if the cache lacks it (${CHAIN_RECIPE.blocks} blocks of ${CHAIN_RECIPE.minTxs}-${CHAIN_RECIPE.maxTxs} transactions, about a minute;
in $RPCSTACK_CACHE/bench/chain, RPCSTACK_CACHE defaulting to ~/.cache/rpcstack) and prints where it is and what it holds.
  --help   this text`;

if (require.main === module) {
  const [arg] = process.argv.slice(2);
  if (arg === "--help" || arg === "-h") {
    console.log(USAGE);
    process.exit(0);
  }
  if (arg !== undefined) {
    console.error(`bench/chain.ts: ${arg.startsWith("-") ? `unknown option ${arg}` : `takes no arguments (got ${arg})`}\n${USAGE}`);
    process.exit(2);
  }
  benchChain()
    .then(({ dir, chain }) => (console.log(`${dir}\n${JSON.stringify({ ...chain, sampleTxs: chain.sampleTxs.length, sampleHolders: chain.sampleHolders.length })}`), process.exit(0)))
    .catch((e) => (console.error(e.message), process.exit(1)));
}
