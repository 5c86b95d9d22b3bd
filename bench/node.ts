/**
 * The benches' EVM node: real geth on the bench chain (bench/chain.ts: hundreds of blocks of
 * 150-300 ERC-20 transfers, trades and plain transfers, made once per machine and cached), its head
 * moving every `blockSeconds` as on a live chain. What the read and relay mixes read of it is here.
 */
import { jsonRpc } from "../devtools/net.js";
import { balanceOfData, startChainNode, TRADE_TOPIC, type BenchChain, type GethNode } from "./chain.js";
import type { MixChain } from "./mixes.js";
import type { BenchProcesses } from "./processes.js";

export interface BenchNode {
  readonly node: GethNode;
  readonly chain: BenchChain;
  /** The node's `finalized` block when the bench started: reads at or below it are what a cache may keep. */
  readonly final: number;
  /** What the mixes read: final blocks, their receipts, logs by pair, and the relay mix's call. */
  readonly mix: MixChain;
}

/** Mainnet's slot: the head moves as it does there, unless a bench asks otherwise. */
export const MAINNET_BLOCK_SECONDS = 12;

/** Starts geth on a copy of the bench chain (ended with the bench's other processes). */
export async function startBenchNode(procs: BenchProcesses, blockSeconds = MAINNET_BLOCK_SECONDS): Promise<BenchNode> {
  const { node, chain } = await startChainNode(procs.work, blockSeconds);
  procs.adopt(node.pid);
  const final = parseInt((await jsonRpc(node.url, "eth_getBlockByNumber", ["finalized", false])).number, 16);
  if (final < chain.firstBlock + 10) throw new Error(`bench chain: geth's finalized block ${final} leaves too few final blocks (the chain's first filled block is ${chain.firstBlock})`);
  // The sampled transactions are in block order; keep those of final blocks, as their receipts are.
  const share = (final - chain.firstBlock + 1) / (chain.lastBlock - chain.firstBlock + 1);
  const mix: MixChain = {
    oldFirst: chain.firstBlock,
    oldLast: final,
    txs: chain.sampleTxs.slice(0, Math.max(1, Math.floor(chain.sampleTxs.length * share) - 1)),
    // The popular quarter of the pairs, in pages of 10 blocks: what many clients ask alike.
    logs: { address: chain.market, topic: TRADE_TOPIC, pairs: Math.ceil(chain.pairs / 4), span: 10 },
    // A view every client of a dapp calls alike: one holder's balance at `latest`.
    call: { to: chain.token, data: balanceOfData(chain.sampleHolders[0]) },
  };
  return { node, chain, final, mix };
}
