/**
 * Makes the benches' chain (bench/chain.ts caches and serves it): geth --dev, an OpenZeppelin ERC-20
 * and a DEX-like market (bench/contracts/*.sol, compiled with solc-js), then CHAIN_RECIPE.blocks
 * blocks of 150-300 transactions each from the dev account: ERC-20 transfers to thousands of holders
 * (a Transfer log each), market trades (storage written, a Trade log indexed by trader and pair) and
 * plain transfers. geth's dev beacon seals what its pool holds as soon as a transaction becomes
 * executable, so each block's transactions are sent with the first nonce last: until it comes they
 * wait in the queue, then they are promoted and sealed together into one block.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AbiCoder, Interface, dataSlice, getAddress, keccak256, toBeHex, toQuantity } from "ethers";
import { jsonRpc, waitFor } from "../devtools/net.js";
import { gethRelease, pickPorts, settle, startGeth } from "./geth.js";

const ROOT = join(__dirname, "..");

/** What the chain is made of; a change here (or of the geth pin) makes a new chain in its own folder. */
export const CHAIN_RECIPE = {
  version: 1,
  /** The mix's random seed (the same blocks, whatever the version). */
  seed: 1,
  /** Blocks of transactions (after the two deployments). */
  blocks: 300,
  minTxs: 150,
  maxTxs: 300,
  /** Of a block's transactions: ERC-20 transfers, market trades; the rest plain transfers. */
  transferShare: 0.6,
  tradeShare: 0.25,
  /** Addresses that receive tokens and ether (each a storage slot of the token). */
  holders: 4000,
  /** Market pairs (a Trade log's second topic). */
  pairs: 64,
  /** Mainnet's block gas limit in 2026 (geth's own default for --miner.gaslimit). */
  gasLimit: 60_000_000,
} as const;

export interface BenchChain {
  /** The geth release it was made with (and that must serve it). */
  readonly geth: string;
  readonly token: string;
  readonly market: string;
  /** The filled blocks, first and last. */
  readonly firstBlock: number;
  readonly lastBlock: number;
  readonly transactions: number;
  /** Every 20th transaction's hash (receipts to read). */
  readonly sampleTxs: string[];
  /** Holders to read balances of. */
  readonly sampleHolders: string[];
  readonly pairs: number;
  /** The dev chain's EIP-155 id. */
  readonly chainId: number;
  /** Median over every 10th filled block: gas used, and bytes of its JSON with full transactions. */
  readonly gasUsedPerBlock: number;
  readonly fullBlockBytes: number;
  /** Bytes of the datadir. */
  readonly bytes: number;
  readonly madeInSeconds: number;
}

/**
 * Gas each call may use. geth v1.17.5's dev chain charges an OpenZeppelin transfer to a new holder
 * ~150k (eth_estimateGas), far above the ~52k of the pre-2026 tables: the limits leave room, and a
 * block's gas used is what its calls cost (measured in chain.json).
 */
const TRANSFER_GAS = 250_000;
const TRADE_GAS = 300_000;

/** A small seeded generator, so that the same recipe makes the same mix of calls. */
function random(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n);
  };
}

interface Compiled {
  readonly abi: any[];
  readonly bytecode: string;
}

/** Compiles bench/contracts with solc-js, OpenZeppelin's sources read from node_modules. */
function compileContracts(): Record<"BenchToken" | "BenchMarket", Compiled> {
  const solc: { compile(input: string, callbacks: { import(path: string): { contents: string } | { error: string } }): string; version(): string } = require("solc");
  const sources = Object.fromEntries(["BenchToken.sol", "BenchMarket.sol"].map((f) => [f, { content: readFileSync(join(ROOT, "bench/contracts", f), "utf8") }]));
  const input = { language: "Solidity", sources, settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } } };
  const imports = (path: string) => {
    const file = join(ROOT, "node_modules", path);
    return existsSync(file) ? { contents: readFileSync(file, "utf8") } : { error: `not found: ${path}` };
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: imports }));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length) throw new Error(`solc ${solc.version()}: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`);
  const pick = (file: string, name: string): Compiled => ({ abi: out.contracts[file][name].abi, bytecode: `0x${out.contracts[file][name].evm.bytecode.object}` });
  return { BenchToken: pick("BenchToken.sol", "BenchToken"), BenchMarket: pick("BenchMarket.sol", "BenchMarket") };
}

/** JSON-RPC batches of at most 500 calls (geth takes 1,000): the answers in order, or the first error. */
async function batch(url: string, calls: { method: string; params: unknown[] }[]): Promise<any[]> {
  if (calls.length > 500) return [...(await batch(url, calls.slice(0, 500))), ...(await batch(url, calls.slice(500)))];
  const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(calls.map((c, i) => ({ jsonrpc: "2.0", id: i, ...c }))) });
  const answers = (await res.json()) as { id: number; result?: unknown; error?: { message: string } }[];
  const failed = answers.find((a) => a.error);
  if (failed) throw new Error(`${calls[failed.id].method}: ${failed.error!.message}`);
  return answers.sort((a, b) => a.id - b.id).map((a) => a.result);
}

/** Makes the chain in `dir` (its `data` folder) with the geth binary `geth`: what chain.json then holds. */
export async function makeChain(geth: string, dir: string, log: (s: string) => void): Promise<BenchChain> {
  const t0 = Date.now();
  const R = CHAIN_RECIPE;
  const contracts = compileContracts();
  const ports = await pickPorts();
  // Room in the pool for a whole block waiting on its first nonce.
  const child = startGeth(geth, join(dir, "data"), 0, R.gasLimit, ports, ["--txpool.accountqueue=1024", "--txpool.globalqueue=4096", "--txpool.accountslots=1024", "--txpool.globalslots=8192", "--rpc.txfeecap=0"]);
  const url = `http://127.0.0.1:${ports.http}`;
  try {
    const from: string = await waitFor("geth --dev", async () => ((await jsonRpc(url, "eth_accounts")) as string[])?.[0], 60_000);
    const receipt = (hash: string) => waitFor(`receipt of ${hash}`, async () => (await jsonRpc(url, "eth_getTransactionReceipt", [hash])) ?? undefined, 30_000);
    const deploy = async (c: Compiled, args: string) => {
      const r = await receipt(await jsonRpc(url, "eth_sendTransaction", [{ from, gas: toQuantity(5_000_000), data: c.bytecode + args }]));
      if (r.status !== "0x1") throw new Error(`deploying a bench contract failed: ${JSON.stringify(r)}`);
      return getAddress(r.contractAddress);
    };
    const token = await deploy(contracts.BenchToken, AbiCoder.defaultAbiCoder().encode(["uint256"], [10n ** 30n]).slice(2));
    const market = await deploy(contracts.BenchMarket, "");
    const tokenAbi = new Interface(contracts.BenchToken.abi);
    const marketAbi = new Interface(contracts.BenchMarket.abi);
    const holders = Array.from({ length: R.holders }, (_, i) => getAddress(dataSlice(keccak256(toBeHex(i + 1, 32)), 12)));
    const rnd = random(R.seed);
    let nonce = parseInt(await jsonRpc(url, "eth_getTransactionCount", [from, "latest"]), 16);
    const sampleTxs: string[] = [];
    let transactions = 0;
    let firstBlock = 0;
    let lastBlock = 0;
    for (let b = 0; b < R.blocks; b++) {
      const count = R.minTxs + rnd(R.maxTxs - R.minTxs + 1);
      const txs = Array.from({ length: count }, (_, i) => {
        const kind = rnd(1000) / 1000;
        const to = holders[rnd(holders.length)];
        const tx =
          kind < R.transferShare
            ? { to: token, gas: toQuantity(TRANSFER_GAS), data: tokenAbi.encodeFunctionData("transfer", [to, BigInt(1 + rnd(1_000_000)) * 10n ** 15n]) }
            : kind < R.transferShare + R.tradeShare
              ? { to: market, gas: toQuantity(TRADE_GAS), data: marketAbi.encodeFunctionData("trade", [rnd(R.pairs), BigInt(1 + rnd(1_000_000)) * 10n ** 12n]) }
              : { to, gas: toQuantity(21_000), value: toQuantity(BigInt(1 + rnd(1_000_000)) * 10n ** 9n) };
        return { method: "eth_sendTransaction", params: [{ from, nonce: toQuantity(nonce + i), ...tx }] };
      });
      // Every nonce but the first waits in the queue; the first makes them all executable at once.
      const hashes = [...(await batch(url, txs.slice(1))), ...(await batch(url, txs.slice(0, 1)))];
      nonce += count;
      const last = await receipt(hashes[count - 2]);
      const first = await receipt(hashes[count - 1]);
      if (first.blockNumber !== last.blockNumber) throw new Error(`block ${b}: its ${count} transactions were sealed in blocks ${parseInt(first.blockNumber, 16)}-${parseInt(last.blockNumber, 16)}, not one`);
      lastBlock = parseInt(last.blockNumber, 16);
      firstBlock ||= lastBlock;
      transactions += count;
      hashes.forEach((h, i) => i % 20 === 0 && sampleTxs.push(h));
      if ((b + 1) % 50 === 0) log(`bench chain: ${b + 1} blocks, ${transactions} transactions (${Math.round((Date.now() - t0) / 1000)} s)`);
    }
    const receipts = await batch(url, sampleTxs.map((h) => ({ method: "eth_getTransactionReceipt", params: [h] })));
    const failed = receipts.filter((r) => r.status !== "0x1");
    if (failed.length) throw new Error(`bench chain: ${failed.length} of ${receipts.length} sampled transactions reverted (first ${failed[0].transactionHash})`);
    // What a block costs to read: its gas used and its JSON with full transactions, every 10th block.
    const blocks = await batch(url, Array.from({ length: Math.ceil((lastBlock - firstBlock + 1) / 10) }, (_, i) => ({ method: "eth_getBlockByNumber", params: [toQuantity(firstBlock + i * 10), true] })));
    const mid = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1];
    const gasUsedPerBlock = mid(blocks.map((b) => parseInt(b.gasUsed, 16)));
    const fullBlockBytes = mid(blocks.map((b) => JSON.stringify(b).length));
    const chainId = parseInt(await jsonRpc(url, "eth_chainId"), 16);
    // What geth does after the last block (its log index) is kept in the cached chain.
    await settle(child.proc.pid!);
    await child.stop();
    const bytes = parseInt(execFileSync("du", ["-sb", join(dir, "data")], { encoding: "utf8" }), 10);
    return { geth: gethRelease(geth), token, market, firstBlock, lastBlock, transactions, sampleTxs, sampleHolders: holders.filter((_, i) => i % 10 === 0), pairs: R.pairs, chainId, gasUsedPerBlock, fullBlockBytes, bytes, madeInSeconds: Math.round((Date.now() - t0) / 1000) };
  } catch (e) {
    await child.stop();
    throw new Error(`${(e as Error).message}\n${child.output().slice(-3000)}`);
  }
}
