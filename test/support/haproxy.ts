/** Runs Debian's HAProxy on the generated gateway configuration, on loopback ports. */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProjectKey } from "../../config/index.js";
import { HAPROXY_ENVIRONMENT } from "../../gateway/limits.js";
import { buildGateway, GATEWAY_LIMIT_DEFAULTS, type GatewayBuild, type GatewayChain, type GatewayOptions } from "../../gateway/build.js";
import { writeGatewayFiles } from "../../devtools/gatewayFiles.js";
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
  stop(): Promise<void>;
}

export { writeGatewayFiles };

export const haproxyVersion = () => execFileSync("haproxy", ["-v"], { encoding: "utf8" }).split("\n")[0];

export async function startGateway(
  chains: readonly GatewayChain[],
  keys: readonly ProjectKey[],
  over: Partial<GatewayOptions> = {},
  certNames: readonly string[] = ["localhost"],
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
    rateLimitPerSecond: 1000,
    maxBodyBytes: 64 * 1024,
    checkIntervalMs: 300,
    caFile: join(process.env.RPCSTACK_TEST_CA_DIR!, "ca.pem"),
    adminSocket: join(dir, "admin.sock"),
    threads: 1,
    maxConnections: 2000,
    ...GATEWAY_LIMIT_DEFAULTS,
    ...over,
  };
  const build = buildGateway(chains, keys, opts);
  mkdirSync(join(dir, "certs"), { recursive: true });
  writeFileSync(opts.certFile, issueCert(certNames));
  writeGatewayFiles(dir, build);
  const cfg = join(dir, "haproxy.cfg");
  writeFileSync(cfg, build.config);
  execFileSync("haproxy", ["-c", "-q", "-f", cfg], { stdio: "pipe" });
  const child: Child = start("haproxy", ["-db", "-f", cfg], { env: { ...process.env, ...HAPROXY_ENVIRONMENT } });
  try {
    await waitFor("haproxy", () => new Promise<boolean | undefined>((resolve, reject) => {
      if (child.proc.exitCode !== null) return reject(new Error(`haproxy exited with ${child.proc.exitCode}`));
      const s = connect(httpsPort, "127.0.0.1", () => (s.destroy(), resolve(true)));
      s.on("error", () => resolve(undefined));
    }), 15_000);
  } catch (e) {
    await child.stop();
    throw new Error(`${(e as Error).message}\n${child.output()}`);
  }
  return {
    build, dir, httpsPort, httpPort, metricsPort,
    base: `https://localhost:${httpsPort}`,
    logs: () => child.output(),
    stop: async () => {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
