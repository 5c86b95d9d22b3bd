/**
 * HAProxy on the generated gateway configuration for the cache bench: one chain `eth` in front of
 * an upstream, with or without the cache, started as the gateway container starts it (its
 * environment), plus what the bench reads of it (one POST, the cache's metrics, memory).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../devtools/gatewayFiles.js";
import { freePort } from "../devtools/net.js";

export const BENCH_KEYS = [
  { name: "bench", key: "bench_key_0123456789abcdefghijklmnopqrstu" },
  { name: "scanner", key: "bench_scan_0123456789abcdefghijklmnopqrs" },
];

export interface BenchGateway {
  /** The chain's JSON-RPC URL for a project key (the first by default). */
  url(key?: string): string;
  readonly metricsPort: number;
  readonly pid: number;
}

/** Starts gateways in `work` (certificate both.pem there); every child lands in `children` for the caller to stop. */
export function gatewayStarter(work: string, threads: number, children: ChildProcess[]) {
  const cert = join(work, "both.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", join(work, "key.pem"), "-out", join(work, "cert.pem"), "-days", "1", "-subj", "/CN=localhost"], { stdio: "pipe" });
  writeFileSync(cert, readFileSync(join(work, "cert.pem"), "utf8") + readFileSync(join(work, "key.pem"), "utf8"));
  return async (name: string, upstream: string, cache: GatewayOptions["cache"]): Promise<BenchGateway> => {
    const opts: GatewayOptions = {
      bindAddress: "127.0.0.1", httpsPort: await freePort(), httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() },
      certFile: cert, filesDir: join(work, name), luaDir: PACKAGE_LUA_DIR, rateLimitPerSecond: 1_000_000, maxBodyBytes: 1 << 20,
      checkIntervalMs: 2000, caFile: "/etc/ssl/certs/ca-certificates.crt", threads, maxConnections: 4000,
      ...GATEWAY_LIMIT_DEFAULTS, maxConnectionsPerAddress: 4000, wsMaxConnectionsPerKey: 4000, cache,
    };
    const build = buildGateway([{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: upstream } }], BENCH_KEYS, opts);
    writeGatewayFiles(opts.filesDir, build);
    writeFileSync(join(work, `${name}.cfg`), build.config);
    // With the environment the gateway container gives HAProxy (its buffers' memory behaviour).
    const p = spawn("haproxy", ["-db", "-f", join(work, `${name}.cfg`)], { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, ...build.environment } });
    p.stdout!.resume();
    p.stderr!.resume();
    children.push(p);
    await new Promise((r) => setTimeout(r, 1000));
    const base = `https://127.0.0.1:${opts.httpsPort}/gateway/eth/rpc-http/`;
    return { url: (key = BENCH_KEYS[0].key) => base + key, metricsPort: opts.metrics.port, pid: p.pid! };
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

export const cacheMetrics = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics/cache`)).text();
/** A figure of the cache's metrics text (the chain `eth`'s where it is per chain). */
export const metric = (text: string, name: string) => Number(new RegExp(`^rpcstack_cache_${name}(?:\\{chain="eth"\\})? (\\d+)$`, "m").exec(text)?.[1] ?? NaN);
/** The process's resident memory now (VmRSS) and at its peak so far (VmHWM), in KiB. */
export const rssKiB = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
export const peakRssKiB = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
