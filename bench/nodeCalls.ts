/**
 * What one call of each kind the mixes send costs the bench's node alone (geth on the bench chain,
 * bench/node.ts): wrk with one kind at a time, 32 connections, and the node's CPU per call. The
 * figures docs/benchmark.md gives beside the read mix, so that a cache's gain can be read against
 * what it saves the node.
 *
 *   npx tsx bench/nodeCalls.ts [--seconds N] [--connections N]   (the bench's one option list)
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { benchArgs } from "./args.js";
import { fig, show } from "./figures.js";
import { cpuMs, wrk } from "./measure.js";
import { startBenchNode } from "./node.js";
import { benchProcesses, runBench } from "./processes.js";

const args = benchArgs(process.argv.slice(2));
const procs = benchProcesses("rpcstack-bench-node-calls");

async function main() {
  const { node, chain, mix } = await startBenchNode(procs, args["block-seconds"]);
  const lua = (body: string) => `request = function() return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, ${body}) end\n`;
  const rpc = (method: string, params: string) => `'{"jsonrpc":"2.0","id":1,"method":"${method}","params":${params}}'`;
  const old = `math.random(${mix.oldFirst}, ${mix.oldLast})`;
  const kinds: Record<string, string> = {
    eth_chainId: lua(rpc("eth_chainId", "[]")),
    eth_blockNumber: lua(rpc("eth_blockNumber", "[]")),
    "eth_call (balanceOf at latest)": lua(rpc("eth_call", `[${JSON.stringify(mix.call)},"latest"]`)),
    "the latest block": lua(rpc("eth_getBlockByNumber", '["latest",false]')),
    "a final block": lua(`string.format(${rpc("eth_getBlockByNumber", '["0x%x",false]')}, ${old})`),
    "a final block with its transactions": lua(`string.format(${rpc("eth_getBlockByNumber", '["0x%x",true]')}, ${old})`),
    "a receipt": `local txs = { ${mix.txs.map((t) => `"${t}"`).join(",")} }\n${lua(`string.format(${rpc("eth_getTransactionReceipt", '["%s"]')}, txs[math.random(#txs)])`)}`,
    [`eth_getLogs of one pair over ${mix.logs.span} blocks`]: lua(
      `(function() local f = math.random(${mix.oldFirst}, ${mix.oldLast - mix.logs.span + 1}); return string.format(${rpc("eth_getLogs", `[{"fromBlock":"0x%x","toBlock":"0x%x","address":"${mix.logs.address}","topics":["${mix.logs.topic}",null,"0x%064x"]}]`)}, f, f + ${mix.logs.span - 1}, math.random(0, ${mix.logs.pairs - 1})) end)()`,
    ),
  };
  console.log(`bench node calls: geth ${chain.geth} on the bench chain, ${args.connections} connections, ${args.seconds} s per kind`);
  for (const [kind, script] of Object.entries(kinds)) {
    const file = join(procs.work, "kind.lua");
    writeFileSync(file, script);
    const c0 = cpuMs([node.pid]);
    const r = wrk(node.url, args.seconds, args.connections, file);
    console.log(`  ${kind.padEnd(40)} ${show(r.rps).padStart(8)} calls/s  ${show(fig(((cpuMs([node.pid]) - c0) * 1000) / r.requests!)).padStart(7)} us CPU per call  p50 ${show(r.p50ms)} ms`);
  }
}

runBench(procs, main);
