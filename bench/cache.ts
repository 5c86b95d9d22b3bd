/**
 * The response cache on a read mix against a real EVM node (hardhat with hundreds of blocks and
 * transactions), in one run: the node alone, the gateway without cache, the gateway with cache
 * (both through the gateway's TLS listener). wrk sends the mix with an id that changes per call:
 * 50% eth_getBlockByNumber on older blocks, 20% receipts, 10% eth_chainId, 10% eth_blockNumber,
 * 10% `latest` blocks. Then fills a small cache past its budget and reads its memory.
 * Adds ratios.cache and cache to bench/results/latest.json (written by bench/run.ts first).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import { CACHE_DEFAULTS } from "../gateway/cache.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../devtools/gatewayFiles.js";
import { startHardhat } from "../devtools/hardhat.js";
import { freePort, jsonRpc } from "../devtools/net.js";
import { benchArgs } from "./args.js";
import { cpuMs, median, wrk, type Result } from "./measure.js";

const ROOT = join(__dirname, "..");
const KEY = "bench_key_0123456789abcdefghijklmnopqrstu";
const args = benchArgs(process.argv.slice(2));
const SECONDS = args["cache-seconds"];
const ROUNDS = args.rounds;
const CONNECTIONS = args.connections;
const work = mkdtempSync(join(tmpdir(), "rpcstack-bench-cache-"));
const children: ChildProcess[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface MixResult extends Result {
  /** Cache hits over the requests wrk completed (the cached case). */
  hitRatio?: number;
}

/** The read mix as a wrk script: the request bodies are chosen per call, the id counts up; the path is each case's URL's. */
function mixScript(old: number, txs: string[]): string {
  const file = join(work, "mix.lua");
  writeFileSync(file, `
local txs = { ${txs.map((t) => `"${t}"`).join(", ")} }
local n = 0
math.randomseed(os.time())
request = function()
  n = n + 1
  local r, body = math.random(100)
  if r <= 50 then body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["0x%x",false]}', n, math.random(1, ${old}))
  elseif r <= 70 then body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getTransactionReceipt","params":["%s"]}', n, txs[math.random(#txs)])
  elseif r <= 80 then body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_chainId","params":[]}', n)
  elseif r <= 90 then body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_blockNumber","params":[]}', n)
  else body = string.format('{"jsonrpc":"2.0","id":%d,"method":"eth_getBlockByNumber","params":["latest",false]}', n) end
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, body)
end
`);
  return file;
}

const metric = (text: string, name: string) => Number(new RegExp(`^rpcstack_cache_${name}(?:\\{chain="eth"\\})? (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
const cacheMetrics = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics/cache`)).text();
const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);

async function startGw(name: string, upstream: string, cache: GatewayOptions["cache"]) {
  const opts: GatewayOptions = {
    bindAddress: "127.0.0.1", httpsPort: await freePort(), httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() },
    certFile: join(work, "both.pem"), filesDir: join(work, name), luaDir: PACKAGE_LUA_DIR, rateLimitPerSecond: 1_000_000, maxBodyBytes: 1 << 20,
    checkIntervalMs: 2000, caFile: "/etc/ssl/certs/ca-certificates.crt", threads: args.threads, maxConnections: 4000,
    ...GATEWAY_LIMIT_DEFAULTS, maxConnectionsPerAddress: 4000, wsMaxConnectionsPerKey: 4000, cache,
  };
  const build = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: upstream } }], [{ name: "bench", key: KEY }], opts);
  writeGatewayFiles(opts.filesDir, build);
  writeFileSync(join(work, `${name}.cfg`), build.config);
  // With the environment the gateway container gives HAProxy (its buffers' memory behaviour).
  const p = spawn("haproxy", ["-db", "-f", join(work, `${name}.cfg`)], { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, ...build.environment } });
  p.stdout!.resume();
  p.stderr!.resume();
  children.push(p);
  await sleep(1000);
  return { url: `https://127.0.0.1:${opts.httpsPort}/gateway/eth/rpc-http/${KEY}`, metricsPort: opts.metrics.port, pid: p.pid! };
}

const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;

/** One POST to the gateway's TLS listener (its certificate is the bench's own, self-signed). */
const postTls = (url: string, body: string) =>
  new Promise<string>((resolve, reject) => {
    const req = httpsRequest(url, { method: "POST", rejectUnauthorized: false, headers: { "Content-Type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d) => (text += d)).on("end", () => resolve(text));
    });
    req.on("error", reject).end(body);
  });

async function main() {
  const cert = join(work, "cert.pem");
  const key = join(work, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost"], { stdio: "pipe" });
  writeFileSync(join(work, "both.pem"), execFileSync("cat", [cert, key]));

  const node = await startHardhat();
  try {
    // Hundreds of blocks and transactions: each transaction is mined in a block of its own.
    const [from, to] = await jsonRpc(node.url, "eth_accounts");
    const txs: string[] = [];
    for (let i = 0; i < 300; i++) txs.push(await jsonRpc(node.url, "eth_sendTransaction", [{ from, to, value: "0x1" }]));
    const head = parseInt(await jsonRpc(node.url, "eth_blockNumber"), 16);
    console.log(`bench cache: hardhat at block ${head} with ${txs.length} transactions`);

    const plain = await startGw("nocache", node.url, undefined);
    const cached = await startGw("cache", node.url, { maxBytes: 64 * 1024 * 1024, ...CACHE_DEFAULTS });
    const script = mixScript(head - 10, txs);
    const cases: Record<string, { url: string; script: string; metricsPort?: number; pids: number[] }> = {
      node: { url: node.url, script, pids: [node.pid] },
      noCache: { url: plain.url, script, pids: [node.pid, plain.pid] },
      cache: { url: cached.url, script, metricsPort: cached.metricsPort, pids: [node.pid, cached.pid] },
    };
    for (const c of Object.values(cases)) wrk(c.url, 2, CONNECTIONS, c.script); // warm-up (fills the cache as traffic would)
    const runs: Record<string, MixResult[]> = {};
    for (let round = 1; round <= ROUNDS; round++) {
      const order = Object.keys(cases);
      if (round % 2 === 0) order.reverse();
      for (const name of order) {
        const c = cases[name];
        const before = c.metricsPort ? await cacheMetrics(c.metricsPort) : "";
        const cpu0 = cpuMs(c.pids);
        const r: MixResult = wrk(c.url, SECONDS, CONNECTIONS, c.script);
        r.cpuUsPerRequest = Math.round(((cpuMs(c.pids) - cpu0) * 1000) / r.requests!);
        if (c.metricsPort) {
          const after = await cacheMetrics(c.metricsPort);
          // Hits over every request wrk completed (the cache sees only calls that name a cacheable method).
          r.hitRatio = Math.round(((metric(after, "hits_total") - metric(before, "hits_total")) / r.requests!) * 1000) / 1000;
        }
        (runs[name] ??= []).push(r);
        console.log(`round ${round} read mix ${name}: ${r.rps} req/s, ${r.cpuUsPerRequest} us CPU/req${r.hitRatio !== undefined ? `, hit ratio ${r.hitRatio}` : ""}`);
      }
    }
    const M = Object.fromEntries(
      Object.entries(runs).map(([k, v]) => {
        const m = median(v);
        return [k, m.hitRatio === undefined ? m : { ...m, hitRatio: Math.round(m.hitRatio * 1000) / 1000 }];
      }),
    ) as Record<string, MixResult>;

    // Memory: a cache of 8 MiB filled with about 24 MB of big blocks (~1.2 MB each).
    const budget = 8 * 1024 * 1024;
    const small = await startGw("small", node.url, { maxBytes: budget, ...CACHE_DEFAULTS });
    const rssNoCache = rssKiB(plain.pid);
    const rssBefore = rssKiB(small.pid);
    const big: string[] = [];
    for (let i = 0; i < 12; i++) {
      const tx = await jsonRpc(node.url, "eth_sendTransaction", [{ from, to, gas: "0x7a1200", data: `0x${"00".repeat(600 * 1024)}` }]);
      big.push((await jsonRpc(node.url, "eth_getTransactionReceipt", [tx])).blockHash);
    }
    await sleep(2500);
    let peakRss = 0;
    for (const hash of big) {
      for (const body of [`{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByHash","params":["${hash}",true]}`, `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByHash","params":["${hash}",false]}`]) {
        await postTls(small.url, body);
        peakRss = Math.max(peakRss, rssKiB(small.pid));
      }
    }
    const mm = await cacheMetrics(small.metricsPort);
    // And many small answers (~1-3 KB) through a 1 MiB budget: every block both ways, every receipt.
    const tinyBudget = 1024 * 1024;
    const tiny = await startGw("tiny", node.url, { maxBytes: tinyBudget, ...CACHE_DEFAULTS });
    const tinyBodies = [
      ...Array.from({ length: head }, (_, n) => [`"0x${(n + 1).toString(16)}",true`, `"0x${(n + 1).toString(16)}",false`]).flat().map((p) => `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":[${p}]}`),
      ...txs.map((t) => `{"jsonrpc":"2.0","id":1,"method":"eth_getTransactionReceipt","params":["${t}"]}`),
    ];
    let tinyOffered = 0;
    for (const body of tinyBodies) {
      tinyOffered += (await postTls(tiny.url, body)).length;
    }
    const tm = await cacheMetrics(tiny.metricsPort);
    const memory = {
      budgetBytes: budget,
      heldBytes: metric(mm, "bytes"),
      entries: metric(mm, "entries"),
      evictions: metric(mm, "evictions_total"),
      luaMemoryBytes: metric(mm, "lua_memory_bytes"),
      haproxyRssKiB: { withoutCache: rssNoCache, cacheEmpty: rssBefore, cacheFilledPeak: peakRss, cacheFilledEnd: rssKiB(small.pid) },
      small: {
        budgetBytes: tinyBudget,
        offeredBytes: tinyOffered,
        answers: tinyBodies.length,
        heldBytes: metric(tm, "bytes"),
        entries: metric(tm, "entries"),
        evictions: metric(tm, "evictions_total"),
        luaMemoryBytes: metric(tm, "lua_memory_bytes"),
        haproxyRssKiB: rssKiB(tiny.pid),
      },
    };

    const results = existsSync(join(args.out, "latest.json")) ? JSON.parse(readFileSync(join(args.out, "latest.json"), "utf8")) : { date: new Date().toISOString() };
    results.ratios = {
      ...results.ratios,
      cache: {
        gatewayOverNode: ratio(M.cache.rps, M.node.rps),
        cacheOverNoCache: ratio(M.cache.rps, M.noCache.rps),
        noCacheOverNode: ratio(M.noCache.rps, M.node.rps),
        // CPU per request of node + gateway, node alone over cached gateway (higher: the cache saves more).
        cpuNodeOverCache: ratio(M.node.cpuUsPerRequest!, M.cache.cpuUsPerRequest!),
        cpuNoCacheOverCache: ratio(M.noCache.cpuUsPerRequest!, M.cache.cpuUsPerRequest!),
      },
    };
    results.cache = { hitRatio: M.cache.hitRatio, readMix: M, blocks: head, transactions: txs.length, seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS, memory, raw: runs };
    mkdirSync(args.out, { recursive: true });
    writeFileSync(join(args.out, "latest.json"), JSON.stringify(results, null, 2) + "\n");

    console.log(`\nRead mix on hardhat (${head} blocks, ${txs.length} transactions), ${CONNECTIONS} connections, ${SECONDS}s x ${ROUNDS} rounds (median)\n`);
    console.log("| case                  |    req/s | p50 ms  | p99 ms  | vs node | hit ratio | CPU us/req |");
    console.log("| --------------------- | -------- | ------- | ------- | ------- | --------- | ---------- |");
    const label: Record<string, string> = { node: "node alone", noCache: "gateway without cache", cache: "gateway with cache" };
    for (const k of ["node", "noCache", "cache"]) {
      const r = M[k];
      console.log(`| ${label[k].padEnd(21)} | ${String(r.rps).padStart(8)} | ${r.p50ms.toFixed(2).padStart(7)} | ${r.p99ms.toFixed(2).padStart(7)} | ${ratio(r.rps, M.node.rps).toFixed(3).padStart(7)} | ${(r.hitRatio?.toFixed(3) ?? "-").padStart(9)} | ${String(r.cpuUsPerRequest).padStart(10)} |`);
    }
    const rc = results.ratios.cache;
    console.log(`\nratios (read mix req/s): cache/node ${rc.gatewayOverNode}, cache/no cache ${rc.cacheOverNoCache}, no cache/node ${rc.noCacheOverNode}; hit ratio ${M.cache.hitRatio}`);
    console.log(`ratios (CPU per request, node + gateway): node alone/cache ${rc.cpuNodeOverCache}, no cache/cache ${rc.cpuNoCacheOverCache}`);
    console.log(`memory: budget ${budget} bytes; held ${memory.heldBytes} bytes in ${memory.entries} entries after ${memory.evictions} evictions; Lua state ${Math.round(memory.luaMemoryBytes / 1024)} KiB; HAProxy RSS without cache ${rssNoCache} KiB, cache empty ${rssBefore} KiB, filled (peak) ${peakRss} KiB, after ${memory.haproxyRssKiB.cacheFilledEnd} KiB`);
    const sm = memory.small;
    console.log(`memory, small answers: budget ${sm.budgetBytes} bytes; ${sm.answers} answers (${sm.offeredBytes} bytes) offered; held ${sm.heldBytes} bytes in ${sm.entries} entries after ${sm.evictions} evictions; Lua state ${Math.round(sm.luaMemoryBytes / 1024)} KiB; HAProxy RSS ${sm.haproxyRssKiB} KiB`);
    console.log(`wrote ratios.cache and cache into ${join(args.out, "latest.json")}`);
  } finally {
    await node.stop();
  }
}

function stopAll() {
  for (const p of children) {
    try {
      process.kill(-p.pid!, "SIGTERM");
    } catch {}
  }
  rmSync(work, { recursive: true, force: true });
}

main()
  .then(() => (stopAll(), process.exit(0)))
  .catch((e) => (console.error(e), stopAll(), process.exit(1)));
