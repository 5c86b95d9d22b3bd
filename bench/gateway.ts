/** The package's gateway as the benches run it: generated config, loopback ports, its own HAProxy process. */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayOptions } from "../gateway/build.js";
import type { GatewayChain, ProjectKey } from "../gateway/types.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../devtools/gatewayFiles.js";
import { HAPROXY_LOOPBACK_FLAGS, haproxyBinary } from "../devtools/haproxy.js";
import { freePort } from "../devtools/net.js";

/** The bench gateway's largest body (gateway.maxBodyKiB 1024, the default): its buffers are this plus header room. */
export const BENCH_MAX_BODY_BYTES = 1 << 20;

export const BENCH_KEY = "bench_key_0123456789abcdefghijklmnopqrstu";
/** A second project key, for the cache bench's per-key share: one key scans while the other reads its own. */
export const BENCH_SCAN_KEY = "bench_scan_0123456789abcdefghijklmnopqrs";

/**
 * One self-signed ECDSA P-256 certificate for every TLS listener in a run (wrk does not verify):
 * `cert.pem` and `key.pem` in `work`, and `both.pem` (HAProxy's form).
 */
export function selfSignedCert(work: string): { cert: string; key: string; both: string } {
  const [cert, key, both] = ["cert.pem", "key.pem", "both.pem"].map((f) => join(work, f));
  execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], { stdio: "pipe" });
  writeFileSync(both, readFileSync(cert, "utf8") + readFileSync(key, "utf8"));
  return { cert, key, both };
}

export interface BenchGatewayOptions {
  /** Work directory (certificate `both.pem` in it) and this gateway's name in it. */
  readonly work: string;
  readonly name: string;
  readonly chains: readonly GatewayChain[];
  /** The project keys it serves (BENCH_KEY by default). */
  readonly keys?: readonly ProjectKey[];
  readonly cache?: GatewayOptions["cache"];
  readonly threads: number;
  /**
   * Serve the public listener without TLS (the generated bind line minus its `ssl crt ... alpn`),
   * to compare with a peer that cannot terminate TLS. Everything else is the generated config.
   */
  readonly plain?: boolean;
  /** Accept badges of project "bench" signed with this key's private half (PEM public key). */
  readonly badgePublicKey?: string;
  /** Options over the bench's own (e.g. the production per-address bounds, which wrk's one address would hit). */
  readonly over?: Partial<GatewayOptions>;
  /** An edit of the generated config's text (a variant to measure against it). */
  readonly edit?: (config: string) => string;
  /** A command HAProxy runs under, e.g. valgrind's (bench/instructions.ts). */
  readonly wrap?: readonly string[];
}

export interface BenchGateway {
  /** https:// (or http:// when plain) origin of the public listener. */
  readonly origin: string;
  readonly metricsPort: number;
  readonly pid: number;
  readonly proc: ChildProcess;
  /** HAProxy's runtime API socket (level admin). */
  readonly adminSocket: string;
}

/** Edits the generated public bind line to plain HTTP; throws if the generated form changed. */
export function plainBind(config: string, certFile: string): string {
  const tls = ` ssl crt ${certFile} alpn h2,http/1.1`;
  if (config.split(tls).length !== 2) throw new Error(`the generated config no longer has one bind line ending in "${tls}"`);
  return config.replace(tls, "");
}

/**
 * HAProxy on `cfg` with the environment the gateway container gives it (`env`), its access log
 * (stdout) appended to `<cfg>.log`: a file, as nginx's access log is. Not a pipe: wrk runs while
 * the bench's event loop is blocked, so a pipe fills after 64 KiB and HAProxy drops every later
 * line (writev EAGAIN, seen with strace), and the gateway measured would write almost no log. A
 * container's log driver keeps reading. An exit other than the bench's own stop says HAProxy's
 * last words on stderr.
 */
export function spawnHaproxy(cfg: string, env: Readonly<Record<string, string>>, name: string, wrap: readonly string[] = []): ChildProcess {
  const log = openSync(`${cfg}.log`, "a");
  const [cmd, ...argv] = [...wrap, haproxyBinary(), ...HAPROXY_LOOPBACK_FLAGS, "-f", cfg];
  const proc = spawn(cmd, argv, { stdio: ["ignore", log, "pipe"], detached: true, env: { ...process.env, ...env } });
  closeSync(log);
  let err = "";
  proc.stderr!.on("data", (d) => (err = (err + d).slice(-2000)));
  proc.on("exit", (code, signal) => (code || (signal && !["SIGTERM", "SIGINT"].includes(signal))) && console.error(`${name}: HAProxy exited (${code ?? signal}): ${err}`));
  return proc;
}

export async function startBenchGateway(o: BenchGatewayOptions): Promise<BenchGateway> {
  const opts: GatewayOptions = {
    bindAddress: "127.0.0.1", httpsPort: await freePort(), httpPort: await freePort(), metrics: { address: "127.0.0.1", port: await freePort() },
    certFile: join(o.work, "both.pem"), filesDir: join(o.work, o.name), luaDir: PACKAGE_LUA_DIR, rateLimitPerSecond: 1_000_000, maxBodyBytes: BENCH_MAX_BODY_BYTES,
    checkIntervalMs: 2000, caFile: "/etc/ssl/certs/ca-certificates.crt", threads: o.threads, maxConnections: 4000,
    // The production limits, so the bench measures the policy too; wrk's connections all come from one address.
    ...GATEWAY_LIMIT_DEFAULTS, maxConnectionsPerAddress: 4000, wsMaxConnectionsPerKey: 4000, cache: o.cache,
    // No badge service runs: the bench signs its badge itself.
    ...(o.badgePublicKey ? { badges: { service: "127.0.0.1:9", projects: ["bench"], perAddressPerMinute: 20 } } : {}),
    adminSocket: join(o.work, `${o.name}.sock`),
    ...o.over,
  };
  const build = buildGateway(o.chains, o.keys ?? [{ name: "bench", key: BENCH_KEY }], opts, o.badgePublicKey);
  writeGatewayFiles(opts.filesDir, build);
  const cfg = join(o.work, `${o.name}.cfg`);
  const config = o.plain ? plainBind(build.config, opts.certFile) : build.config;
  writeFileSync(cfg, o.edit ? o.edit(config) : config);
  const proc = spawnHaproxy(cfg, build.environment, o.name, o.wrap);
  return { origin: `${o.plain ? "http" : "https"}://127.0.0.1:${opts.httpsPort}`, metricsPort: opts.metrics.port, pid: proc.pid!, proc, adminSocket: opts.adminSocket! };
}
