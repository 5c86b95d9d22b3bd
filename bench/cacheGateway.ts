/**
 * The cache bench's gateway: one chain `eth` in front of an upstream, with or without the cache,
 * as bench/gateway.ts starts the package's gateway, serving two project keys; plus what the bench
 * reads of it (one POST and its X-Cache, the cache's metrics, memory).
 */
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import type { GatewayOptions } from "../gateway/build.js";
import { BENCH_KEY, BENCH_SCAN_KEY, selfSignedCert, startBenchGateway } from "./gateway.js";
import { metricSum, scrape } from "./measure.js";
import type { BenchProcesses } from "./processes.js";

export const BENCH_KEYS = [
  { name: "bench", key: BENCH_KEY },
  { name: "scanner", key: BENCH_SCAN_KEY },
];

export interface CacheGateway {
  /** The chain's JSON-RPC URL for a project key (the first by default). */
  url(key?: string): string;
  readonly metricsPort: number;
  readonly pid: number;
}

/** Starts gateways in the bench's work directory (its certificate made here once); `procs` ends them. */
export function gatewayStarter(procs: BenchProcesses, threads: number) {
  selfSignedCert(procs.work);
  return async (name: string, upstream: string, cache: GatewayOptions["cache"]): Promise<CacheGateway> => {
    const gw = await startBenchGateway({ work: procs.work, name, cache, threads, keys: BENCH_KEYS, chains: [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: upstream } }] });
    procs.adopt(gw.proc);
    await new Promise((r) => setTimeout(r, 1000));
    const base = `${gw.origin}/gateway/eth/rpc-http/`;
    return { url: (key = BENCH_KEY) => base + key, metricsPort: gw.metricsPort, pid: gw.pid };
  };
}

/** One POST to the gateway's TLS listener (its certificate is the bench's own, self-signed): the answer and its X-Cache. */
export const postTls = (url: string, body: string) =>
  new Promise<{ text: string; cache?: string }>((resolve, reject) => {
    const req = httpsRequest(url, { method: "POST", rejectUnauthorized: false, headers: { "Content-Type": "application/json" } }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d) => (text += d)).on("end", () => resolve({ text, cache: res.headers["x-cache"] as string | undefined }));
    });
    req.on("error", reject).end(body);
  });

export const cacheMetrics = (port: number) => scrape(`http://127.0.0.1:${port}/metrics/cache`);
/** A figure of the cache's metrics text (summed over chains where it is per chain; the bench has one). */
export const metric = (text: string, name: string) => metricSum(text, `rpcstack_cache_${name}`);
/** The process's resident memory now (VmRSS) and at its peak so far (VmHWM), in KiB. */
export const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
export const peakRssKiB = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
