/**
 * Merging identical reads at the head on a moving head (issue 52, item 3): 32 and 64 clients
 * repeating the relay mix (eth_blockNumber and one eth_call at `latest`, each its own id) through
 * the gateway with its cache on, on real geth with a block every 2 s and every 12 s (the bench
 * chain, bench/node.ts), and on hardhat mining every 150 ms (geth's dev mode seals at most once a
 * second; hardhat's evm_setIntervalMining is the one extra used, and its eth_call is to an empty
 * address). Per case: client calls, the calls that reached the node per client call (the chain's
 * backend's HTTP requests in HAProxy, which count relays, the merge's fetches and the cache's
 * polls), what the merge did, and whether any answer showed a head older than one an answer had
 * shown before its call was sent (bench/staleness.ts). Adds `merge` to bench/results/latest.json.
 *
 *   npx tsx bench/merge.ts [--merge-seconds N] [--out DIR]   (the bench's one option list)
 */
import { Agent, request } from "node:https";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { rpcBackend } from "../gateway/routes.js";
import type { GatewayChain } from "../gateway/build.js";
import { startHardhat } from "../devtools/hardhat.js";
import { jsonRpc } from "../devtools/net.js";
import { benchArgs } from "./args.js";
import { fig } from "./figures.js";
import { BENCH_KEY, selfSignedCert, startBenchGateway } from "./gateway.js";
import { machine, partTimer } from "./machine.js";
import { metricSum, scrape } from "./measure.js";
import { startBenchNode } from "./node.js";
import { benchProcesses, runBench, type BenchProcesses } from "./processes.js";
import { staleness, type HeadAnswer, type Staleness } from "./staleness.js";

const args = benchArgs(process.argv.slice(2));
const SECONDS = args["merge-seconds"];
const CLIENTS = [32, 64] as const;
const procs = benchProcesses("rpcstack-bench-merge");

export interface MergeCase {
  readonly node: string;
  readonly blockSeconds: number;
  readonly clients: number;
  readonly seconds: number;
  readonly calls: number;
  readonly callsPerSecond: number;
  /** Requests the chain's backend sent the node, over the client calls. */
  readonly nodeCallsPerCall: number;
  /** Of the client calls: answered with an identical call's answer in flight; sent to the node alone. */
  readonly mergedShare: number;
  readonly aloneShare: number;
  readonly heads: Staleness;
}

interface Load {
  readonly calls: number;
  readonly failed: number;
  readonly wrongIds: number;
  readonly heads: HeadAnswer[];
}

/** `clients` loops, each sending the relay mix back to back for `seconds`, every answer checked. */
async function relayLoad(url: string, call: string, clients: number, seconds: number): Promise<Load> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients, rejectUnauthorized: false });
  const post = (body: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(url, { agent, method: "POST", headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) } }, (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d) => (text += d)).on("end", () => resolve({ status: res.statusCode!, text }));
      });
      req.on("error", reject).end(body);
    });
  const heads: HeadAnswer[] = [];
  let calls = 0;
  let failed = 0;
  let wrongIds = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let n = c; performance.now() < deadline; n++) {
        const id = `c${c}-${n}`;
        const head = n % 2 === 0;
        const body = head ? `{"jsonrpc":"2.0","id":"${id}","method":"eth_blockNumber","params":[]}` : `{"jsonrpc":"2.0","id":"${id}","method":"eth_call","params":[${call},"latest"]}`;
        const sentAt = performance.now();
        const r = await post(body).catch((e) => ({ status: 0, text: String(e) }));
        const answeredAt = performance.now();
        calls++;
        let answer: { id?: unknown; result?: unknown };
        try {
          answer = JSON.parse(r.text);
        } catch {
          answer = {};
        }
        if (r.status !== 200 || answer.result === undefined) {
          failed++;
          continue;
        }
        if (answer.id !== id) wrongIds++;
        if (head) heads.push({ sentAt, answeredAt, head: parseInt(answer.result as string, 16) });
      }
    }),
  );
  agent.destroy();
  return { calls, failed, wrongIds, heads };
}

interface MergeNode {
  readonly name: string;
  readonly url: string;
  readonly blockSeconds: number;
  /** The relay mix's eth_call object. */
  readonly call: string;
  stop(): Promise<void>;
}

async function gethNode(p: BenchProcesses, blockSeconds: number): Promise<MergeNode> {
  const { node, mix } = await startBenchNode(p, blockSeconds);
  return { name: node.version, url: node.url, blockSeconds, call: JSON.stringify(mix.call), stop: () => node.stop() };
}

async function hardhatNode(p: BenchProcesses, ms: number): Promise<MergeNode> {
  const node = await startHardhat();
  p.adopt(node.pid);
  await jsonRpc(node.url, "hardhat_setLoggingEnabled", [false]);
  await jsonRpc(node.url, "evm_setIntervalMining", [ms]);
  return { name: "hardhat (evm_setIntervalMining)", url: node.url, blockSeconds: ms / 1000, call: JSON.stringify({ to: `0x${"00".repeat(20)}`, data: "0x" }), stop: () => node.stop() };
}

async function measure(node: MergeNode): Promise<MergeCase[]> {
  const chain: GatewayChain = { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: node.url } };
  const gw = await startBenchGateway({ work: procs.work, name: `merge-${node.blockSeconds}`, chains: [chain], cache: { maxBytes: 64 * 1024 * 1024, ...CACHE_DEFAULTS }, threads: args.threads });
  procs.adopt(gw.proc);
  const url = `${gw.origin}/gateway/eth/rpc-http/${BENCH_KEY}`;
  const counters = async () => {
    const [haproxy, cache] = await Promise.all([scrape(`http://127.0.0.1:${gw.metricsPort}/metrics`), scrape(`http://127.0.0.1:${gw.metricsPort}/metrics/cache`)]);
    const backend = new RegExp(`^haproxy_backend_http_requests_total\\{proxy="${rpcBackend(chain)}"\\} (\\d+)`, "m").exec(haproxy);
    if (!backend) throw new Error(`the gateway's metrics have no HTTP request count for ${rpcBackend(chain)}`);
    return { node: Number(backend[1]), merged: metricSum(cache, "rpcstack_cache_merged_total"), alone: metricSum(cache, "rpcstack_cache_merge_alone_total") };
  };
  try {
    await relayLoad(url, node.call, 8, 2); // the first fetches and the cache's first poll
    const out: MergeCase[] = [];
    for (const clients of CLIENTS) {
      const c0 = await counters();
      const load = await relayLoad(url, node.call, clients, SECONDS);
      const c1 = await counters();
      if (load.failed || load.wrongIds) throw new Error(`merge bench on ${node.name}: ${load.failed} of ${load.calls} calls failed, ${load.wrongIds} answered with another id`);
      const r: MergeCase = {
        node: node.name,
        blockSeconds: node.blockSeconds,
        clients,
        seconds: SECONDS,
        calls: load.calls,
        callsPerSecond: fig(load.calls / SECONDS),
        nodeCallsPerCall: fig((c1.node - c0.node) / load.calls),
        mergedShare: fig((c1.merged - c0.merged) / load.calls),
        aloneShare: fig((c1.alone - c0.alone) / load.calls),
        heads: staleness(load.heads),
      };
      console.log(
        `merge: ${r.node}, a block every ${r.blockSeconds} s, ${clients} clients: ${r.calls} calls (${r.callsPerSecond}/s), ` +
          `${r.nodeCallsPerCall} node calls per call, merged ${r.mergedShare}, alone ${r.aloneShare}; ` +
          `${r.heads.checked} heads checked, ${r.heads.stale} older than one shown before they were asked${r.heads.stale ? ` (at most ${r.heads.worstBehind} blocks)` : ""}`,
      );
      out.push(r);
    }
    return out;
  } finally {
    gw.proc.kill();
  }
}

async function main() {
  const part = partTimer();
  selfSignedCert(procs.work);
  const cases: MergeCase[] = [];
  for (const start of [(p: BenchProcesses) => gethNode(p, 2), (p: BenchProcesses) => gethNode(p, 12), (p: BenchProcesses) => hardhatNode(p, 150)]) {
    const t0 = Date.now();
    const node = await start(procs);
    const t1 = Date.now();
    try {
      cases.push(...(await measure(node)));
    } finally {
      await node.stop();
      // Where the part's time goes: one run took 73 s and the next 204 s with the same code.
      console.log(`merge: ${node.name} every ${node.blockSeconds} s: started in ${Math.round((t1 - t0) / 1000)} s, measured in ${Math.round((Date.now() - t1) / 1000)} s`);
    }
  }
  const file = join(args.out, "latest.json");
  const results = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { date: new Date().toISOString() };
  results.machine = { ...results.machine, ...machine() };
  results.parts = { ...results.parts, merge: part.end() };
  results.merge = { seconds: SECONDS, cases };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(file, JSON.stringify(results, null, 2) + "\n");
  console.log(`wrote merge into ${file}`);
}

runBench(procs, main);
