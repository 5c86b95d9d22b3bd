/**
 * The benches' EVM node: hardhat with hundreds of blocks and transactions (bench/mixes.ts seedChain),
 * still mining a block a second so `latest` and the head checks mean what they do on a live chain.
 *
 * Its per-call log is turned off once the chain is seeded. hardhat writes a line per call (several
 * for an eth_call) to its stdout, a pipe the bench holds for error reports; the log cost the node
 * 1.9x the CPU per call on the read and relay mixes (docs/benchmark.md), and while wrk runs the
 * bench's event loop is blocked, so the lines queue in the node's own memory. What the bench
 * measures is the node answering, not the node writing a log an operator's node does not write.
 *
 * The chain is not reset between rounds: empty blocks do not slow the node (9,000 blocks more left
 * its CPU per call unchanged), and going back to a snapshot is a reorg: hardhat calls its head
 * final, so the gateway's cache takes the reverted chain for another one and drops what it holds
 * (docs/cache.md), and each round would start with a cold cache.
 */
import { startHardhat, type EvmNode } from "../devtools/hardhat.js";
import { jsonRpc } from "../devtools/net.js";
import { seedChain, type SeededChain } from "./mixes.js";
import type { BenchProcesses } from "./processes.js";

export interface BenchNode {
  readonly node: EvmNode;
  readonly chain: SeededChain;
}

/** Starts the node (ended with the bench's other processes), seeds it and turns its log off. */
export async function startBenchNode(procs: BenchProcesses): Promise<BenchNode> {
  const node = await startHardhat();
  procs.adopt(node.pid);
  const chain = await seedChain(node.url);
  await jsonRpc(node.url, "hardhat_setLoggingEnabled", [false]);
  return { node, chain };
}
