/**
 * The certificate flow for real: HAProxy starts on the self-signed certificate, then the
 * package's ACME script (Debian's certbot) gets one from Pebble over HTTP-01 through HAProxy's
 * port 80, and the deploy hook swaps it in through HAProxy's certificate socket, without a restart.
 */
import { execFileSync, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Agent, request as httpsRequest } from "node:https";
import { join } from "node:path";
import { connect as tlsConnect, type PeerCertificate } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "./harness.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { freePort, start, stopEach, waitFor, type Child } from "./support/net.js";
import { startStarknetSim, type StarknetSim } from "./support/starknetSim.js";
import { caDir, issueCert } from "./support/tls.js";

const DOMAIN = "rpc.gateway.test";
const KEY = "acme_test_key_0123456789abcdefghijklmn";

let gw: RunningGateway;
let sim: StarknetSim;
let pebble: Child;
let dns: Child;
let acmePort: number;
let pebblePort: number;

function peerCert(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: "127.0.0.1", port, servername: DOMAIN, rejectUnauthorized: false }, () => {
      const cert = s.getPeerCertificate();
      s.end();
      resolve(cert);
    });
    s.on("error", reject);
  });
}

beforeAll(async () => {
  sim = await startStarknetSim({ from: 3, to: 3 });
  acmePort = await freePort();
}, 60_000);

afterAll(() => stopEach(gw, pebble, dns, sim));

describe("ACME HTTP-01 through the gateway, against Pebble", () => {
  it("issues a certificate and HAProxy serves it without a restart or a dropped connection", async () => {
    gw = await startGateway([{ path: "strk", chainId: "STRK", kind: "starknet", upstreams: { rpcHttp: sim.url } }], [{ name: "ops", key: KEY }], { acmeResponder: `127.0.0.1:${acmePort}` }, [DOMAIN]);
    // Start from the package's self-signed certificate, as the container does, swapped in live.
    execFileSync("python3", [join(ROOT, "gateway/acme/selfsigned.py"), join(gw.dir, "selfsigned.pem"), DOMAIN]);
    execFileSync("cp", [join(gw.dir, "selfsigned.pem"), join(gw.dir, "certs/gateway.pem")]);
    execFileSync("python3", [join(ROOT, "gateway/acme/haproxy_cert.py"), join(gw.dir, "cert.sock"), join(gw.dir, "certs/gateway.pem")]);
    const before = await peerCert(gw.httpsPort);
    expect(before.issuer.CN).toBe(DOMAIN); // self-signed

    // Pebble resolves every name to 127.0.0.1 through challtestsrv, and validates on the gateway's port 80.
    const dnsPort = await freePort();
    dns = start("pebble-challtestsrv", ["-dns01", `127.0.0.1:${dnsPort}`, "-http01", "", "-https01", "", "-tlsalpn01", "", "-management", `127.0.0.1:${await freePort()}`, "-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""]);
    pebblePort = await freePort();
    writeFileSync(join(gw.dir, "pebble.pem"), issueCert(["localhost"]));
    writeFileSync(join(gw.dir, "pebble.json"), JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${pebblePort}`,
        managementListenAddress: `127.0.0.1:${await freePort()}`,
        certificate: join(gw.dir, "pebble.pem"),
        privateKey: join(gw.dir, "pebble.pem"),
        httpPort: gw.httpPort,
        tlsPort: await freePort(),
        ocspResponderURL: "",
        externalAccountBindingRequired: false,
      },
    }));
    pebble = start("pebble", ["-config", join(gw.dir, "pebble.json"), "-dnsserver", `127.0.0.1:${dnsPort}`], {
      env: { ...process.env, PEBBLE_VA_NOSLEEP: "1", PEBBLE_WFE_NONCEREJECT: "0", PEBBLE_AUTHZREUSE: "0" },
    });
    await waitFor("pebble", async () => ((await fetch(`https://localhost:${pebblePort}/dir`)).ok ? true : undefined), 20_000);

    // A keep-alive connection opened before the swap must keep working after it.
    const agent = new Agent({ keepAlive: true, maxSockets: 1, servername: DOMAIN, rejectUnauthorized: false } as any);
    const call = () =>
      new Promise<{ status: number; socketId: unknown }>((resolve, reject) => {
        const req = httpsRequest({ host: "127.0.0.1", port: gw.httpsPort, path: `/gateway/strk/rpc-http/${KEY}`, method: "POST", agent, headers: { Host: DOMAIN, "Content-Type": "application/json" } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ status: res.statusCode!, socketId: (req.socket as any)._rpcstackId }));
        });
        req.on("socket", (s: any) => (s._rpcstackId ??= Math.random()));
        req.on("error", reject);
        req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "starknet_blockNumber", params: [] }));
      });
    const first = await call();
    expect(first.status).toBe(200);

    const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const p = spawn("sh", [join(ROOT, "gateway/acme/acme.sh")], {
        env: {
          ...process.env,
          ACME_DOMAINS: DOMAIN,
          ACME_EMAIL: "ops@example.com",
          ACME_SERVER: `https://localhost:${pebblePort}/dir`,
          ACME_PORT: String(acmePort),
          ACME_ADDRESS: "127.0.0.1",
          ACME_ONCE: "1",
          CERT_FILE: join(gw.dir, "certs/gateway.pem"),
          HAPROXY_CERT_SOCKET: join(gw.dir, "cert.sock"),
          CERTBOT_DIR: join(gw.dir, "letsencrypt"),
          REQUESTS_CA_BUNDLE: join(caDir(), "ca.pem"),
        },
      });
      let out = "";
      p.stdout.on("data", (d) => (out += d));
      p.stderr.on("data", (d) => (out += d));
      p.on("close", (code) => resolve({ code, out }));
    });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain("haproxy now serves");

    const after = await peerCert(gw.httpsPort);
    expect(after.issuer.CN).toMatch(/Pebble/);
    expect(after.subjectaltname).toContain(`DNS:${DOMAIN}`);
    expect(after.fingerprint256).not.toBe(before.fingerprint256);

    const second = await call();
    expect(second.status).toBe(200);
    expect(second.socketId).toBe(first.socketId);
    agent.destroy();
    // The challenge went through HAProxy's port 80 (logged there), and no key was logged.
    expect(gw.logs()).toMatch(/http be_acme\/acme/);
    expect(gw.logs()).not.toContain(KEY);
  }, 120_000);
});
