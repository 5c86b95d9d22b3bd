/** The client library for real, against the real HAProxy gateway in front of real and simulated nodes. */
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { RelayError, createClient } from "../client/index.js";
import { startCosmosSim, SIM_HEIGHT, type CosmosSim } from "./support/cosmosSim.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startHardhat, type EvmNode } from "./support/hardhat.js";
import { freePort, stopEach } from "./support/net.js";

const KEY = "client_test_key_0123456789abcdefghijkl";
const BADGE_KEY = "badge_issued_key_0123456789abcdefghijk";

let evm: EvmNode;
let cosmos: CosmosSim;
let slow: Server;
let badge: Server;
let badgeCalls: { projectId: string; chainIds: string[] }[] = [];
let badgeTtlSeconds = 3600;
let gw: RunningGateway;

const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return (s.address() as { port: number }).port;
};

beforeAll(async () => {
  evm = await startHardhat();
  // A simulator, not the real chain (cosmosChain.test.ts runs one): the tests read which path the client's relay reached.
  cosmos = await startCosmosSim();
  // An upstream that answers health checks but takes 3 s over every relay.
  slow = createServer((req, res) => {
    if (req.headers["user-agent"] === "rpcstack-gateway-healthcheck") return res.writeHead(200, { "Content-Type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    setTimeout(() => res.writeHead(200, { "Content-Type": "application/json" }).end('{"jsonrpc":"2.0","id":1,"result":"0x1"}'), 3000);
  });
  const slowPort = await listen(slow);
  // A stub badge server implementing the documented contract.
  badge = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const msg = JSON.parse(body);
      badgeCalls.push(msg);
      if (msg.projectId !== "proj-1") return res.writeHead(403, { "Content-Type": "application/json" }).end(JSON.stringify({ error: "unknown project" }));
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ key: BADGE_KEY, expiresAt: new Date(Date.now() + badgeTtlSeconds * 1000).toISOString() }));
    });
  });
  await listen(badge);
  gw = await startGateway(
    [
      { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: evm.url, rpcWs: evm.wsUrl } },
      { path: "cosmoshub", chainId: "COSMOSHUB", kind: "cosmos", upstreams: { rpcHttp: cosmos.url, rest: cosmos.url } },
      { path: "slow", chainId: "SLOW", kind: "evm", upstreams: { rpcHttp: `http://127.0.0.1:${slowPort}` } },
    ],
    [{ name: "backend", key: KEY }, { name: "badge", key: BADGE_KEY }],
  );
}, 120_000);

afterAll(async () => {
  await stopEach(gw, evm, cosmos);
  slow?.closeAllConnections();
  slow?.close();
  badge?.close();
});

const badgeAddress = () => `http://127.0.0.1:${(badge.address() as { port: number }).port}/badge`;

describe("privateKey mode", () => {
  it("JSON-RPC relays to the real EVM node", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "ETH1", geolocation: "EU" });
    expect(await client.sendRelay({ method: "eth_chainId", params: [] })).toBe("0x7a69");
    expect(Number(await client.sendRelay({ method: "eth_blockNumber" }))).toBeGreaterThanOrEqual(0);
  });

  it("REST relays to the REST simulator, and Tendermint RPC both ways", async () => {
    const rest = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "COSMOSHUB", rpcInterface: "rest" });
    expect((await rest.sendRelay({ method: "GET", url: "/node_info" })).default_node_info.network).toBe("cosmoshub-4");
    expect(cosmos.seen.at(-1)!.url).toBe("/node_info");
    const tm = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "COSMOSHUB", rpcInterface: "tendermintrpc" });
    expect((await tm.sendRelay({ method: "status", params: {} })).sync_info.latest_block_height).toBe(String(SIM_HEIGHT));
    expect((await tm.sendRelay({ method: "GET", url: "/status" })).node_info.network).toBe("cosmoshub-4");
  });

  it("several chains: each relay names its chain", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: ["ETH1", "COSMOSHUB"] });
    expect(await client.sendRelay({ method: "eth_chainId", chainId: "ETH1" })).toBe("0x7a69");
    await expect(client.sendRelay({ method: "eth_chainId" })).rejects.toThrow(/name the chainId/);
    await expect(client.sendRelay({ method: "eth_chainId", chainId: "STRK" })).rejects.toThrow(/not one of this client's/);
  });

  it("a wrong key is a typed 401 error with the JSON-RPC code", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: "x".repeat(40), chainIds: "ETH1" });
    const err = await client.sendRelay({ method: "eth_blockNumber" }).catch((e) => e);
    expect(err).toBeInstanceOf(RelayError);
    expect(err).toMatchObject({ kind: "http", status: 401, code: -32001 });
    expect(err.message).toMatch(/ETH1: HTTP 401: invalid or missing project key/);
  });

  it("a JSON-RPC error from the node is typed as such", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "ETH1" });
    const err = await client.sendRelay({ method: "no_such_method" }).catch((e) => e);
    // hardhat answers an unknown method with its own code, -32004, inside a 200 reply.
    expect(err).toMatchObject({ kind: "jsonrpc", code: -32004 });
    expect(err.message).toBe("ETH1: Method no_such_method is not supported");
  });

  it("a node slower than the timeout is a typed timeout (a read is retried first)", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "SLOW", chainPaths: { SLOW: "slow" }, timeoutMs: 400, retries: 1 });
    const started = Date.now();
    const err = await client.sendRelay({ method: "eth_blockNumber" }).catch((e) => e);
    expect(err).toMatchObject({ kind: "timeout" });
    expect(err.message).toMatch(/no answer within 400 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(800);
  });

  it("a gateway that is down is a typed connection error; writes are not retried", async () => {
    const down = `https://localhost:${await freePort()}`;
    const client = createClient({ baseUrl: down, privateKey: KEY, chainIds: "ETH1", retries: 2 });
    const err = await client.sendRelay({ method: "eth_blockNumber" }).catch((e) => e);
    expect(err).toMatchObject({ kind: "connection" });
    expect(err.message).toMatch(/cannot reach .*ECONNREFUSED/);
    let calls = 0;
    const counting = createClient({ baseUrl: down, privateKey: KEY, chainIds: "ETH1", retries: 2, fetch: (async (...a: Parameters<typeof fetch>) => (calls++, fetch(...a))) as typeof fetch });
    await counting.sendRelay({ method: "eth_sendRawTransaction", params: ["0x00"] }).catch(() => {});
    expect(calls).toBe(1);
    await counting.sendRelay({ method: "eth_blockNumber" }).catch(() => {});
    expect(calls).toBe(4);
  });

  it("subscribe: eth_subscribe newHeads over the gateway's WebSocket", async () => {
    const client = createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "ETH1", WebSocket: WebSocket as any });
    const heads: string[] = [];
    const sub = await client.subscribe({ method: "eth_subscribe", params: ["newHeads"] }, (p) => heads.push(p.result.number));
    await new Promise((r) => setTimeout(r, 2500));
    sub.close();
    expect(heads.length).toBeGreaterThanOrEqual(1);
  });

  it("refuses contradictory options with a message that names them", () => {
    expect(() => createClient({ baseUrl: gw.base, chainIds: "ETH1" })).toThrow(/exactly one of privateKey and badge/);
    expect(() => createClient({ baseUrl: gw.base, privateKey: KEY, badge: { badgeServerAddress: "x", projectId: "y" }, chainIds: "ETH1" })).toThrow(/exactly one of privateKey and badge/);
    expect(() => createClient({ baseUrl: gw.base, privateKey: KEY, chainIds: "eth" })).toThrow(/uppercase/);
    expect(() => createClient({ baseUrl: "rpc.example.com", privateKey: KEY, chainIds: "ETH1" })).toThrow(/baseUrl/);
  });
});

describe("badge mode", () => {
  it("fetches a short-lived key from the badge server, reuses it, and renews it before expiry", async () => {
    badgeCalls = [];
    badgeTtlSeconds = 1.5;
    const client = createClient({ baseUrl: gw.base, badge: { badgeServerAddress: badgeAddress(), projectId: "proj-1" }, chainIds: "ETH1" });
    expect(await client.sendRelay({ method: "eth_chainId" })).toBe("0x7a69");
    expect(await client.sendRelay({ method: "eth_chainId" })).toBe("0x7a69");
    expect(badgeCalls).toEqual([{ projectId: "proj-1", chainIds: ["ETH1"] }]);
    await new Promise((r) => setTimeout(r, 1300)); // past 80% of the key's life
    expect(await client.sendRelay({ method: "eth_chainId" })).toBe("0x7a69");
    expect(badgeCalls).toHaveLength(2);
  });

  it("a badge key the gateway refuses is a typed 401 after one renewal", async () => {
    badgeCalls = [];
    badgeTtlSeconds = 3600;
    const wrong = createServer((_q, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ key: "y".repeat(40), expiresIn: 3600 })));
    const port = await listen(wrong);
    try {
      const client = createClient({ baseUrl: gw.base, badge: { badgeServerAddress: `http://127.0.0.1:${port}/`, projectId: "p" }, chainIds: "ETH1" });
      expect(await client.sendRelay({ method: "eth_chainId" }).catch((e) => e)).toMatchObject({ kind: "http", status: 401 });
    } finally {
      wrong.close();
    }
  });

  it("a badge's lifetime is read from expiresIn when the server gives it: a browser whose clock is off still renews in time", async () => {
    let calls = 0;
    // expiresAt as a client whose clock is an hour fast would see it: already past.
    const skewed = createServer((_q, res) => (calls++, res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ key: BADGE_KEY, expiresIn: 3600, expiresAt: new Date(Date.now() - 3600_000).toISOString() }))));
    const port = await listen(skewed);
    try {
      const client = createClient({ baseUrl: gw.base, badge: { badgeServerAddress: `http://127.0.0.1:${port}/`, projectId: "p" }, chainIds: "ETH1" });
      expect(await client.sendRelay({ method: "eth_chainId" })).toBe("0x7a69");
      expect(await client.sendRelay({ method: "eth_chainId" })).toBe("0x7a69");
      expect(calls).toBe(1);
    } finally {
      skewed.close();
    }
  });

  it("a badge server that refuses the project is a typed badge error", async () => {
    const client = createClient({ baseUrl: gw.base, badge: { badgeServerAddress: badgeAddress(), projectId: "nope" }, chainIds: "ETH1" });
    const err = await client.sendRelay({ method: "eth_chainId" }).catch((e) => e);
    expect(err).toMatchObject({ kind: "badge", status: 403 });
    expect(err.message).toContain("unknown project");
  });
});

describe("browser path", () => {
  it("bundles for the browser with no Node built-in (esbuild, platform browser)", async () => {
    const { build } = await import("esbuild");
    const { join } = await import("node:path");
    const res = await build({ entryPoints: [join(__dirname, "../client/index.ts")], bundle: true, platform: "browser", format: "esm", write: false, logLevel: "silent" });
    const text = res.outputFiles[0].text;
    expect(text).toContain("createClient");
    expect(text).not.toMatch(/require\(["']node:|from ["']node:/);
  });
});
