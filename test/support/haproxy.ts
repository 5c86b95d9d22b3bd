/** Runs the gateway's HAProxy (devtools/haproxy.ts: the release production pins) on the generated configuration, on loopback ports. */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ProjectKey, Quota } from "../../config/index.js";
import { HAPROXY_ENVIRONMENT } from "../../gateway/limits.js";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayBuild, type GatewayChain, type GatewayOptions } from "../../gateway/build.js";
import { PACKAGE_LUA_DIR, writeGatewayFiles } from "../../devtools/gatewayFiles.js";
import { HAPROXY_LOOPBACK_FLAGS, haproxyBinary, haproxyVersion, imageAccounts } from "../../devtools/haproxy.js";
import { freePort, start, waitFor, type Child } from "./net.js";
import { issueCert } from "./tls.js";

export interface RunningGateway {
  readonly build: GatewayBuild;
  readonly dir: string;
  readonly httpsPort: number;
  readonly httpPort: number;
  readonly metricsPort: number;
  readonly base: string;
  logs(): string;
  /** A command on HAProxy's runtime API (its admin socket) and what it answered; "" when it cannot be reached. */
  runtime(command: string): Promise<string>;
  stop(): Promise<void>;
}

const runtimeCommand = (socket: string, command: string) =>
  new Promise<string>((resolve) => {
    let out = "";
    const s = connect(socket, () => s.end(`${command}\n`));
    s.on("data", (d) => (out += d));
    s.on("end", () => resolve(out));
    s.on("error", () => resolve(""));
  });

export { HAPROXY_LOOPBACK_FLAGS, PACKAGE_LUA_DIR, haproxyBinary, haproxyVersion, writeGatewayFiles };

/**
 * `haproxy -c -V` (3.2 says "Configuration file is valid" only when verbose) on the files a gateway container is given (container path -> content), placed
 * under a temporary root: haproxy.cfg's paths into the container are moved there, so every
 * file it loads (Lua programs and the modules they require included) must be among them. Users and
 * groups are the image's (imageAccounts), whatever accounts this host has.
 */
export function checkContainerFiles(files: Readonly<Record<string, string>>, configPath = "/usr/local/etc/haproxy/haproxy.cfg"): string {
  const root = mkdtempSync(join(tmpdir(), "rpcstack-gwroot-"));
  try {
    const moved = (text: string) => text.replace(/(?<=[\s'"(])\/(usr\/local\/etc\/haproxy|certs|var\/run\/haproxy|var\/lib\/rpcstack-keys)(?=[\s/'")])/g, `${root}/$1`);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      // gateway_data.lua names the key map too (the WebSocket filter opens it at load).
      writeFileSync(join(root, path), path === configPath || path.endsWith("/gateway_data.lua") ? moved(text) : text);
    }
    mkdirSync(join(root, "certs"), { recursive: true });
    mkdirSync(join(root, "var/run/haproxy"), { recursive: true });
    // The key map's volume: the key map and quota map empty until the key sync fills them, as the container's command leaves them.
    mkdirSync(join(root, "var/lib/rpcstack-keys"), { recursive: true });
    for (const map of ["keys.map", "quotas.map"]) writeFileSync(join(root, "var/lib/rpcstack-keys", map), "", { flag: "a" });
    writeFileSync(join(root, "certs/gateway.pem"), issueCert(["localhost"]));
    return checkAsImage(join(root, configPath), root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** `haproxy -c -V` on a container's configuration, its users and groups resolved as the image has them (the files go in `dir`). */
export const checkAsImage = (cfg: string, dir: string): string =>
  execFileSync(haproxyBinary(), ["-c", "-V", "-f", cfg], { encoding: "utf8", stdio: "pipe", env: { ...process.env, ...imageAccounts(dir) } });

/** How a gateway's HAProxy is run (a test may wrap it, e.g. to watch what it is given). */
export interface HaproxyRunner {
  version(): string;
  /** `haproxy -c` on the configuration; throws with what HAProxy said. */
  check(cfg: string): void;
  start(cfg: string, env: Readonly<Record<string, string>>): Child;
}

export const hostHaproxy: HaproxyRunner = {
  version: haproxyVersion,
  check: (cfg) => void execFileSync(haproxyBinary(), ["-c", "-q", "-f", cfg], { stdio: "pipe" }),
  start: (cfg, env) => start(haproxyBinary(), [...HAPROXY_LOOPBACK_FLAGS, "-f", cfg], { env: { ...process.env, ...env } }),
};

export async function startGateway(
  chains: readonly GatewayChain[],
  keys: readonly ProjectKey[],
  over: Partial<GatewayOptions> = {},
  certNames: readonly string[] = ["localhost"],
  runner: HaproxyRunner = hostHaproxy,
  /** With `over.badges`: the public key badges are verified with (PEM). */
  badgePublicKey?: string,
  quotas: readonly Quota[] = [],
): Promise<RunningGateway> {
  // A free port can be taken by another test between freePort() and HAProxy's bind: then HAProxy
  // exits saying so (it runs without SO_REUSEPORT), and starts again on other ports.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startGatewayOnce(chains, keys, over, certNames, runner, badgePublicKey, quotas);
    } catch (e) {
      if (attempt === 3 || !/cannot bind socket/.test((e as Error).message)) throw e;
    }
  }
}

async function startGatewayOnce(
  chains: readonly GatewayChain[],
  keys: readonly ProjectKey[],
  over: Partial<GatewayOptions>,
  certNames: readonly string[],
  runner: HaproxyRunner,
  badgePublicKey: string | undefined,
  quotas: readonly Quota[],
): Promise<RunningGateway> {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-gw-"));
  const [httpsPort, httpPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const opts: GatewayOptions = {
    bindAddress: "127.0.0.1",
    httpsPort,
    httpPort,
    metrics: { address: "127.0.0.1", port: metricsPort },
    certFile: join(dir, "certs/gateway.pem"),
    filesDir: dir,
    luaDir: PACKAGE_LUA_DIR,
    rateLimitPerSecond: 1000,
    maxBodyBytes: 64 * 1024,
    checkIntervalMs: 300,
    caFile: join(process.env.RPCSTACK_TEST_CA_DIR!, "ca.pem"),
    adminSocket: join(dir, "admin.sock"),
    certSocket: join(dir, "cert.sock"),
    threads: 1,
    maxConnections: 2000,
    ...GATEWAY_LIMIT_DEFAULTS,
    ...over,
  };
  const build = buildGateway(chains, keys, opts, badgePublicKey, quotas);
  mkdirSync(join(dir, "certs"), { recursive: true });
  writeFileSync(opts.certFile, issueCert(certNames));
  writeGatewayFiles(dir, build);
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, build.config);
  runner.check(cfg);
  const child: Child = runner.start(cfg, HAPROXY_ENVIRONMENT);
  try {
    // Ready once its own runtime socket answers: HAProxy opens it after binding every listener, and
    // a port that answers could be another test's HAProxy that took the port first.
    // An HAProxy that exited (a port it could not bind) ends the wait at once.
    const up = await waitFor("haproxy", async () => {
      if (child.proc.exitCode !== null) return false;
      if (opts.adminSocket) return (await runtimeCommand(opts.adminSocket, "show info")).includes("Name: HAProxy") || undefined;
      return new Promise<boolean | undefined>((resolve) => {
        const s = connect(httpsPort, "127.0.0.1", () => (s.destroy(), resolve(true)));
        s.on("error", () => resolve(undefined));
      });
    }, 30_000);
    if (!up) throw new Error(`haproxy exited with ${child.proc.exitCode}`);
  } catch (e) {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}\n${child.output()}`);
  }
  return {
    build, dir, httpsPort, httpPort, metricsPort,
    base: `https://localhost:${httpsPort}`,
    logs: () => child.output(),
    runtime: (command) => (opts.adminSocket ? runtimeCommand(opts.adminSocket, command) : Promise.resolve("")),
    stop: async () => {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
