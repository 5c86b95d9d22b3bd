import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GATEWAY_IMAGES } from "../config/networks/images.js";
import { loadConfig } from "../config/index.js";
import { buildGateway, keyDigest } from "../gateway/build.js";
import { LUA_FILES } from "../gateway/lua.js";
import { readStackFile } from "../export/stackFile.js";
import { gatewayChains, gatewayOptions } from "../plan/index.js";
import { ROOT, TEST_PROJECT_KEYS, runProgram, type StackName } from "./harness.js";
import { PACKAGE_LUA_DIR, checkAsImage, checkContainerFiles, writeGatewayFiles } from "./support/haproxy.js";
import { issueCert } from "./support/tls.js";

const CONTAINER = "docker:index/container:Container";

describe("Gateway under the mock engine", () => {
  it("HAProxy pinned, 443 and 80 public, the usage keeper on loopback, metrics private, the config in the clear and no key map among its files (the key sync's)", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const gw = run.one(CONTAINER, "rpcstack-gateway-haproxy");
    expect(gw.inputs.image).toBe(GATEWAY_IMAGES.haproxy);
    expect(gw.inputs.ports.map((p: any) => `${p.ip}:${p.external}->${p.internal}`).sort()).toEqual(["0.0.0.0:443->443", "0.0.0.0:80->80", "127.0.0.1:9107->9107"]);
    const files = Object.fromEntries(gw.inputs.uploads.map((u: any) => [u.file, u.content]));
    // The key map is on a volume the key sync writes; it holds digests of the keys, never the keys.
    expect(files["/usr/local/etc/haproxy/keys.map"]).toBeUndefined();
    const sync = run.one(CONTAINER, "rpcstack-gateway-key-sync").inputs.uploads.find((u: any) => u.file === "/run/rpcstack-keys/keys.map");
    expect(sync.content).toBe(TEST_PROJECT_KEYS.map((k) => `${keyDigest(k.key)} ${k.name}\n`).join(""));
    // The quota map goes with the keys: a quota changed replaces the key sync, never HAProxy.
    expect(files["/usr/local/etc/haproxy/quotas.map"]).toBeUndefined();
    expect(run.one(CONTAINER, "rpcstack-gateway-key-sync").inputs.uploads.find((u: any) => u.file === "/run/rpcstack-keys/quotas.map")).toBeDefined();
    for (const k of TEST_PROJECT_KEYS) expect(JSON.stringify(gw.inputs.uploads)).not.toContain(k.key);
    // The Lua programs as the package has them, beside the data haproxy.cfg makes them read.
    for (const f of LUA_FILES) expect(files[`/usr/local/etc/haproxy/lua/${f}`], f).toBe(readFileSync(join(ROOT, "gateway/lua", f), "utf8"));
    expect(files["/usr/local/etc/haproxy/gateway_data.lua"]).toContain('deny = { "admin_", "debug_"');
    expect(files["/usr/local/etc/haproxy/haproxy.cfg"]).toContain("lua-prepend-path /usr/local/etc/haproxy/lua/?.lua");
    expect(files["/usr/local/etc/haproxy/haproxy.cfg"]).toContain("bind 0.0.0.0:443 ssl crt /certs/gateway.pem alpn h2,http/1.1");
    expect(files["/usr/local/etc/haproxy/haproxy.cfg"]).toContain("nameserver dns 127.0.0.11:53");
    // Nothing of HAProxy's is a secret, so `pulumi preview --diff` shows every change to haproxy.cfg.
    expect(gw.secretInputs).toEqual([]);
    expect(gw.inputs.ulimits).toEqual([{ name: "nofile", soft: 41024, hard: 41024 }]);
  });

  it("the files uploaded into the HAProxy container are all it loads: haproxy -c on them as the container sees them, Lua modules included", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const uploads = run.one(CONTAINER, "rpcstack-gateway-haproxy").inputs.uploads as { file: string; content: string }[];
    expect(checkContainerFiles(Object.fromEntries(uploads.map((u) => [u.file, u.content])))).toContain("Configuration file is valid");
  });

  it("the readiness step runs after the node containers and before the gateway", async () => {
    const run = await runProgram({ stack: "testnet" });
    const check = run.one(CONTAINER, "rpcstack-readiness-sync-check");
    const nodes = run.byType(CONTAINER).filter((c) => /L1Node|L2Node/.test(c.parent ?? ""));
    expect(check.dependencies).toEqual(expect.arrayContaining(nodes.map((n) => n.urn)));
    for (const name of ["rpcstack-gateway-cert-init", "rpcstack-gateway-haproxy", "rpcstack-gateway-acme"]) {
      expect(run.one(CONTAINER, name).dependencies, name).toContain(check.urn);
    }
  });

  it("public stacks run the ACME client for the domain and every Cosmos hostname; local gets a self-signed certificate", async () => {
    const main = await runProgram({ stack: "mainnet" });
    const acme = main.one(CONTAINER, "rpcstack-gateway-acme");
    expect(acme.inputs.image).toBe(GATEWAY_IMAGES.certbot);
    expect(acme.inputs.envs).toEqual(expect.arrayContaining([
      "ACME_DOMAINS=rpc.example.com,cosmoshub-rpc.rpc.example.com,cosmoshub-rest.rpc.example.com,cosmoshub-grpc.rpc.example.com",
      "ACME_EMAIL=ops@example.com",
      "HAPROXY_CERT_SOCKET=/var/run/haproxy/cert.sock",
    ]));
    expect(acme.inputs.ports).toEqual([]);
    const cfg: string = main.one(CONTAINER, "rpcstack-gateway-haproxy").inputs.uploads.find((u: any) => u.file.endsWith("haproxy.cfg")).content;
    expect(cfg).toContain("server acme acme:8888");
    // The ACME container reaches the certificate socket, and not the runtime API (level admin: it
    // could add a key to the key map or disable a server).
    const shared = (path: string) => (acme.inputs.volumes as { containerPath: string }[]).some((v) => path.startsWith(`${v.containerPath}/`));
    const admin = /stats socket (\S+) .*level admin/.exec(cfg)![1];
    const cert = /frontend cert_update[\s\S]*?bind (\S+)/.exec(cfg)![1];
    expect(shared(cert)).toBe(true);
    expect(shared(admin)).toBe(false);

    const local = await runProgram({ stack: "local" });
    expect(local.byType(CONTAINER).map((c) => c.name)).not.toContain("rpcstack-gateway-acme");
    const init = local.one(CONTAINER, "rpcstack-gateway-cert-init");
    expect(init.inputs.command).toEqual(["/acme/selfsigned.py", "/certs/gateway.pem", "localhost"]);
    expect(init.inputs.attach).toBe(true);
  });

  it("exports the public endpoints per chain and interface, without keys", async () => {
    const run = await runProgram({ stack: "mainnet" });
    const e = run.outputs.endpoints as any;
    expect(e.eth).toEqual({
      chainId: "ETH1",
      endpoints: { rpcHttp: "https://rpc.example.com/gateway/eth/rpc-http/<KEY>", rpcWs: "wss://rpc.example.com/gateway/eth/rpc/<KEY>?secret=null" },
    });
    expect(e.strk.chainId).toBe("STRK");
    expect(e.cosmoshub.endpoints).toMatchObject({
      rest: "https://rpc.example.com/gateway/cosmoshub/rest/<KEY>/<rest_path>",
      tendermintUri: "https://rpc.example.com/gateway/cosmoshub/rpc-http/<KEY>/status",
      tendermintRpc: "https://cosmoshub-rpc.rpc.example.com",
      grpc: "cosmoshub-grpc.rpc.example.com:443",
    });
  });
});

describe.each(["local", "testnet", "mainnet"] as const)("secrets on %s", (stack) => {
  it("a project key appears only in secret inputs, never in outputs", async () => {
    const run = await runProgram({ stack });
    const holding = (needles: readonly string[]) =>
      run.resources.filter((r) => needles.some((n) => JSON.stringify(r.inputs).includes(n))).map((r) => [r.name, r.secretInputs.filter((p) => !p.startsWith("connection"))]);
    // The key itself reaches the smoke test's invoke only (nothing of an invoke is kept in the
    // state); its digest only the key sync's key map.
    expect(holding(TEST_PROJECT_KEYS.map((k) => k.key))).toEqual([]);
    const invoked = run.invokes.filter((i) => TEST_PROJECT_KEYS.some((k) => JSON.stringify(i.inputs).includes(k.key)));
    expect(invoked.map((i) => [i.token, Object.keys(i.inputs.environment)])).toEqual([["command:local:run", expect.arrayContaining(["RPCSTACK_SMOKE_KEY"])]]);
    expect(holding(TEST_PROJECT_KEYS.map((k) => keyDigest(k.key)))).toEqual([["rpcstack-gateway-key-sync", ["uploads.1.content"]]]);
    expect(JSON.stringify(run.outputs)).not.toMatch(new RegExp(TEST_PROJECT_KEYS.map((k) => k.key).join("|")));
  });
});

describe.each(["local", "testnet", "mainnet"] as const)("the %s stack's gateway configuration", (stack: StackName) => {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-gwcfg-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes HAProxy's haproxy -c with the container's options (paths moved to a temp dir)", () => {
    const { entries } = readStackFile(ROOT, stack);
    const settings = loadConfig({ entries, withoutSecrets: true });
    const build = buildGateway(gatewayChains(settings), TEST_PROJECT_KEYS, {
      ...gatewayOptions(settings),
      certFile: join(dir, "gateway.pem"),
      filesDir: dir,
      luaDir: PACKAGE_LUA_DIR,
      adminSocket: join(dir, "admin.sock"),
      keyMapFile: undefined,
      quotaMapFile: undefined,
    });
    writeFileSync(join(dir, "gateway.pem"), issueCert(["localhost"]));
    writeGatewayFiles(dir, build);
    writeFileSync(join(dir, "haproxy.cfg"), build.config);
    expect(checkAsImage(join(dir, "haproxy.cfg"), dir)).toContain("Configuration file is valid");
  });
});

describe("the container-view check resolves users and groups as the gateway's image does", () => {
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-gwuser-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cfg = (user: string, group: string) => {
    const path = join(dir, `${user}-${group}.cfg`);
    writeFileSync(path, `global\n    user ${user}\n    group ${group}\ndefaults\n    mode http\n    timeout client 1s\n    timeout server 1s\n    timeout connect 1s\nfrontend f\n    bind 127.0.0.1:1\n`);
    return path;
  };

  it("the image's haproxy user and group pass on any host, with or without such an account", () => {
    expect(checkAsImage(cfg("haproxy", "haproxy"), dir)).toContain("Configuration file is valid");
  });

  it("a user or group the image lacks fails, naming it", () => {
    expect(() => checkAsImage(cfg("haproxyd", "haproxy"), dir)).toThrow(/cannot find user id for 'haproxyd'/);
    expect(() => checkAsImage(cfg("haproxy", "proxies"), dir)).toThrow(/cannot find group id for 'proxies'/);
  });
});
