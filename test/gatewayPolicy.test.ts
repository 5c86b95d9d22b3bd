/**
 * The gateway against hostile clients, on Debian's real HAProxy: the JSON-RPC method policy,
 * batches, CORS, HSTS, port 80, path normalisation, public-hostname methods, key guessing,
 * what the logs and the runtime API show. Every refusal is checked at the upstream too.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { createHash } from "node:crypto";
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayChain } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { rawExchange } from "./support/http.js";
import { issueCert } from "./support/tls.js";
import { startRecorder, type Recorder } from "./support/recorder.js";

const KEY = "pol_Key_7fQx2LmN9pRs4TvW8yZb3CdE6gHj";
const KEYS = [{ name: "alice", key: KEY }];
const HOSTS = { tendermintRpc: "rpc.hub.test", rest: "rest.hub.test" };

let up: Recorder;
let gw: RunningGateway;

beforeAll(async () => {
  // A recorder, not real nodes (cosmosChain.test.ts runs a real Cosmos chain): the policy is proved by what never reaches a node.
  up = await startRecorder();
  const chains: GatewayChain[] = [
    { path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: up.url } },
    { path: "open", chainId: "OPEN", kind: "evm", upstreams: { rpcHttp: up.url }, allowMethods: ["debug_traceTransaction"], denyMethods: ["eth_sign"] },
    { path: "hub", chainId: "HUB", kind: "cosmos", upstreams: { rpcHttp: `${up.url}/tm`, rest: `${up.url}/base` }, hostnames: HOSTS },
    { path: "hubopen", chainId: "HUBOPEN", kind: "cosmos", upstreams: { rpcHttp: `${up.url}/tm` }, allowMethods: ["unsafe_flush_mempool"] },
  ];
  // The recorder also stands in for the ACME responder behind port 80.
  gw = await startGateway(chains, KEYS, { maxBodyBytes: 1 << 20, acmeResponder: new URL(up.url).host }, ["localhost", ...Object.values(HOSTS)]);
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  await up?.stop();
});

const call = (method: string, id: number = 1) => ({ jsonrpc: "2.0", id, method, params: [] });
const post = (path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
  fetch(`${gw.base}${path}`, { method: "POST", headers: { "Content-Type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body), signal });

/** What the ACME client's socket answers to a POST of `text`, as the ACME client sends a PEM. */
const askCertSocket = (text: string | Buffer) => new Promise<string>((resolve, reject) => {
  const r = httpRequest({ socketPath: `${gw.dir}/cert.sock`, path: "/certificate", method: "POST", headers: { "Content-Length": Buffer.byteLength(text) } }, (res) => {
    let data = "";
    res.on("data", (d) => (data += d));
    res.on("end", () => resolve(data));
  });
  // The gateway answers and closes before a long body is all sent: the reset is expected.
  r.on("error", (e: any) => (e.code === "EPIPE" || e.code === "ECONNRESET" ? resolve("") : reject(e)));
  r.end(text);
});

/** Runs `fn` and returns how many requests reached the upstream meanwhile. */
async function reaching(fn: () => Promise<void>): Promise<number> {
  const before = up.seen.length;
  await fn();
  return up.seen.length - before;
}

async function jsonError(res: Response, status: number, message: RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json");
  const body = await res.json();
  expect(body.error.message).toMatch(message);
}

describe("method policy", () => {
  it("debug_traceTransaction is refused by default and relayed where allowMethods names it", async () => {
    expect(await reaching(async () => jsonError(await post(`/gateway/eth/rpc-http/${KEY}`, call("debug_traceTransaction")), 403, /debug_traceTransaction is not served/))).toBe(0);
    const res = await post(`/gateway/open/rpc-http/${KEY}`, call("debug_traceTransaction"));
    expect(res.status).toBe(200);
    expect(up.seen.at(-1)!.body).toContain("debug_traceTransaction");
  });

  it("the default lists refuse dev-node and admin families; denyMethods adds to them", async () => {
    for (const m of ["hardhat_setBalance", "evm_mine", "anvil_setCode", "admin_peers", "personal_sign", "miner_start", "txpool_content", "engine_newPayloadV3", "testing_buildBlockV1"]) {
      expect(await reaching(async () => jsonError(await post(`/gateway/eth/rpc-http/${KEY}`, call(m)), 403, /is not served/))).toBe(0);
    }
    expect(await reaching(async () => jsonError(await post(`/gateway/open/rpc-http/${KEY}`, call("eth_sign")), 403, /eth_sign/))).toBe(0);
    expect((await post(`/gateway/eth/rpc-http/${KEY}`, call("eth_sign"))).status).toBe(200);
  });

  it("cannot be dodged by case, escapes, repeated keys, nesting in a batch, or unparsable JSON", async () => {
    const dodges = [
      '{"jsonrpc":"2.0","id":1,"method":"DEBUG_traceTransaction","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"debug\\u005ftraceTransaction","params":[]}',
      '{"jsonrpc":"2.0","id":1,"method":"eth_call","Method":"debug_traceTransaction","params":[]}',
      '{"jsonrpc":"2.0","id":1,"m\\u0065thod":"debug_traceTransaction","params":[]}',
    ];
    for (const body of dodges) expect(await reaching(async () => jsonError(await post(`/gateway/eth/rpc-http/${KEY}`, body), 403, /is not served/))).toBe(0);
    // In a batch, the refused call is answered in place and only the others reach the node.
    const batch = '  [{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":2,"method":"hardhat\\u005fsetBalance","params":[]}]';
    expect(await reaching(async () => {
      const res = await post(`/gateway/eth/rpc-http/${KEY}`, batch);
      expect(res.status).toBe(200);
      expect((await res.json())[1].error.message).toMatch(/hardhat_setBalance is not served/);
    })).toBe(1);
    expect(up.seen.at(-1)!.body).toBe('[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}]');
    expect(await reaching(async () => jsonError(await post(`/gateway/eth/rpc-http/${KEY}`, '[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"}'), 400, /not JSON/))).toBe(0);
  });

  it("Tendermint's unsafe calls are refused as URI calls and as JSON-RPC", async () => {
    expect(await reaching(async () => jsonError(await fetch(`${gw.base}/gateway/hub/rpc-http/${KEY}/unsafe_flush_mempool`), 403, /not served/))).toBe(0);
    expect(await reaching(async () => jsonError(await post(`/gateway/hub/rpc-http/${KEY}`, call("dial_peers")), 403, /dial_peers/))).toBe(0);
  });

  it("an allowed Tendermint method is relayed as a URI call and as JSON-RPC; the rest of its family stays refused", async () => {
    const base = `/gateway/hubopen/rpc-http/${KEY}`;
    expect(await reaching(async () => expect((await fetch(`${gw.base}${base}/unsafe_flush_mempool`)).status).toBe(200))).toBe(1);
    expect(up.seen.at(-1)!.url).toBe("/tm/unsafe_flush_mempool");
    expect(await reaching(async () => expect((await post(base, call("unsafe_flush_mempool"))).status).toBe(200))).toBe(1);
    expect(await reaching(async () => jsonError(await fetch(`${gw.base}${base}/unsafe_start_cpu_profiler`), 403, /not served/))).toBe(0);
    expect(await reaching(async () => jsonError(await post(base, call("unsafe_start_cpu_profiler")), 403, /unsafe_start_cpu_profiler/))).toBe(0);
  });

  it("the same policy holds on the chain's Tendermint RPC hostname, JSON-RPC and URI calls alike", async () => {
    const send = (method: string, path: string, body?: unknown) => new Promise<number>((resolve, reject) => {
      const r = httpsRequest({ host: "127.0.0.1", port: gw.httpsPort, servername: HOSTS.tendermintRpc, path, method, headers: { Host: HOSTS.tendermintRpc, "Content-Type": "application/json" } }, (res) => (res.resume(), resolve(res.statusCode!)));
      r.on("error", reject);
      r.end(body === undefined ? undefined : JSON.stringify(body));
    });
    expect(await reaching(async () => {
      expect(await send("POST", "/", call("unsafe_flush_mempool"))).toBe(403);
      expect(await send("GET", "/UNSAFE_flush_mempool")).toBe(403);
    })).toBe(0);
    expect(await reaching(async () => expect(await send("POST", "/", [call("status", 1), call("dial_seeds", 2)])).toBe(200))).toBe(1);
    expect(up.seen.at(-1)!.body).not.toContain("dial_seeds");
    expect(await reaching(async () => expect(await send("POST", "/", call("status"))).toBe(200))).toBe(1);
  });
});

describe("batches", () => {
  it("a batch within gateway.maxBatch is relayed whole", async () => {
    const res = await post(`/gateway/eth/rpc-http/${KEY}`, [call("eth_blockNumber", 1), call("eth_chainId", 2), call("net_version", 3)]);
    expect(res.status).toBe(200);
    expect((await res.json()).map((r: any) => r.id)).toEqual([1, 2, 3]);
  });

  it("a 5,000-call batch gets 413 and never reaches the node", async () => {
    const batch = Array.from({ length: 5000 }, (_, i) => call("eth_blockNumber", i));
    expect(await reaching(async () => jsonError(await post(`/gateway/eth/rpc-http/${KEY}`, batch), 413, /batch longer than 1000 calls/))).toBe(0);
  });
});

describe("browsers and plain HTTP", () => {
  it("a CORS preflight is answered by the gateway; every answer, errors included, allows the origin; HSTS is set", async () => {
    const n = await reaching(async () => {
      const pre = await fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "OPTIONS", headers: { Origin: "http://127.0.0.1:9", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" } });
      expect(pre.status).toBe(204);
      expect(pre.headers.get("access-control-allow-origin")).toBe("*");
      expect(pre.headers.get("access-control-allow-headers")).toMatch(/Content-Type/);
      expect(pre.headers.get("access-control-allow-methods")).toMatch(/POST/);
      const denied = await post(`/gateway/eth/rpc-http/wrong${KEY}`, call("eth_chainId"), { Origin: "http://127.0.0.1:9" });
      expect(denied.status).toBe(401);
      expect(denied.headers.get("access-control-allow-origin")).toBe("*");
    });
    expect(n).toBe(0);
    const ok = await post(`/gateway/eth/rpc-http/${KEY}`, call("eth_chainId"), { Origin: "http://127.0.0.1:9" });
    expect(ok.headers.get("access-control-allow-origin")).toBe("*");
    expect(ok.headers.get("strict-transport-security")).toMatch(/max-age=\d+/);
  });

  it("port 80 refuses gateway paths with a JSON error and redirects the rest to the configured name, not the client's Host", async () => {
    const get = (path: string) => new Promise<{ status: number; location?: string; body: string }>((resolve, reject) => {
      const r = httpRequest({ host: "127.0.0.1", port: gw.httpPort, path, headers: { Host: "evil.example" } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, location: res.headers.location, body }));
      });
      r.on("error", reject);
      r.end();
    });
    const n = await reaching(async () => {
      const refused = await get(`/gateway/eth/rpc-http/${KEY}`);
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).error.message).toMatch(/use https:\/\/localhost/);
      const moved = await get("/docs?x=1");
      expect(moved.status).toBe(301);
      // To the stack's root: its name serves keyed paths only, so no path is carried over.
      expect(moved.location).toBe(`https://localhost:${gw.httpsPort}/`);
    });
    expect(n).toBe(0);
  });
});

describe("paths and hostnames", () => {
  it("dot segments never take a request outside the upstream's base path", async () => {
    for (const p of ["a/../../../../etc", "a/%2e%2e/%2E%2E/%2e%2e/%2e%2e/etc", "..//..//..//etc"]) {
      await (await fetch(`${gw.base}/gateway/hub/rest/${KEY}/${p}`)).arrayBuffer();
    }
    expect(up.seen.filter((s) => !s.url.startsWith("/base") && !s.url.startsWith("/tm") && s.url !== "/")).toEqual([]);
    expect(up.seen.filter((s) => s.url.includes(".."))).toEqual([]);
  });

  it("percent-encoding cannot dodge the policy or the base path (paths sent as-is, not as a URL parser would fix them)", async () => {
    const raw = (path: string, host?: string) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const r = httpsRequest({ host: "127.0.0.1", port: gw.httpsPort, servername: host ?? "localhost", path, headers: host ? { Host: host } : {} }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, body }));
      });
      r.on("error", reject);
      r.end();
    });
    expect(await reaching(async () => {
      for (const p of ["%75nsafe_flush_mempool", "unsafe%5Fflush_mempool", "unsafe%5fflush_mempool", "dial%5Fpeers?persistent=true"]) {
        expect((await raw(`/gateway/hub/rpc-http/${KEY}/${p}`)).status, p).toBe(403);
        expect((await raw(`/${p}`, HOSTS.tendermintRpc)).status, `${HOSTS.tendermintRpc} ${p}`).toBe(403);
      }
      const bad = await raw(`/gateway/hub/rest/${KEY}/a%zz`);
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).error.code).toBe(-32600);
    })).toBe(0);
    expect((await raw(`/gateway/hub/rest/${KEY}/a/%2e%2E/etc`)).status).toBe(200);
    expect(up.seen.at(-1)!.url).toBe("/base/etc");
    // Past the key, the dot segments leave the gateway path itself: nothing is relayed.
    expect(await reaching(async () => expect((await raw(`/gateway/hub/rest/${KEY}/a/%2e%2e/%2E%2E/%2e%2e/etc`)).status).toBe(404))).toBe(0);
  });

  it("public hostnames answer only the methods their interface uses", async () => {
    const send = (method: string) => new Promise<number>((resolve, reject) => {
      const r = httpsRequest({ host: "127.0.0.1", port: gw.httpsPort, servername: HOSTS.rest, path: "/cosmos/x", method, headers: { Host: HOSTS.rest } }, (res) => (res.resume(), resolve(res.statusCode!)));
      r.on("error", reject);
      r.end();
    });
    expect(await reaching(async () => {
      for (const m of ["PUT", "DELETE", "PATCH", "TRACE"]) expect(await send(m)).toBe(405);
    })).toBe(0);
    expect(await send("GET")).toBe(200);
  });
});

describe("keys in logs and on the runtime API", () => {
  it("the access log never holds a key, wherever in the path it is put", async () => {
    const paths = [`/gateway/eth/${KEY}`, `/gateway/${KEY}`, `/gateway/${KEY}/rpc-http/${KEY}`, `/${KEY}`, `/gateway/eth/rpc-http/${KEY}/${KEY}?${KEY}`, `/gateway/eth/rpc-http/${KEY}`];
    for (const p of paths) await (await post(p, call("eth_chainId"))).arrayBuffer();
    await new Promise((r) => setTimeout(r, 300));
    expect(gw.logs()).toMatch(/key=alice chain=eth iface=rpc-http POST/);
    expect(gw.logs()).toMatch(/key=- chain=eth iface=- POST/);
    expect(gw.logs()).not.toContain(KEY);
  });

  it("the ACME client's socket takes a certificate and nothing else: runtime API commands are refused and change nothing", async () => {
    const MALLORY = "mallory_Key_0123456789abcdefghijklmnopq";
    const ask = askCertSocket;
    const digest = createHash("sha256").update(MALLORY).digest("hex").toUpperCase();
    for (const command of [`add map ${gw.dir}/keys.map ${digest} mallory\n`, "disable server be_eth_rpc/s1\n", `show map ${gw.dir}/keys.map\n`, "set ssl cert /etc/passwd <<\nx\n\n"]) {
      expect(await ask(command), command).toMatch(/^refused: not a PEM certificate and key/);
    }
    expect(await ask("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n.\n")).toMatch(/^refused: /);
    expect((await post(`/gateway/eth/rpc-http/${MALLORY}`, call("eth_chainId"))).status).toBe(401);
    expect((await post(`/gateway/eth/rpc-http/${KEY}`, call("eth_chainId"))).status).toBe(200);
  });

  it("the ACME client's socket refuses a certificate whose key is not its own, reads no more than its bound, and its idle connections take nothing from the public listener", async () => {
    const ask = askCertSocket;
    const [a, b] = [issueCert(["localhost"]), issueCert(["localhost"])];
    const certOf = (pem: string) => pem.slice(0, pem.indexOf("-----END CERTIFICATE-----") + 26);
    const keyOf = (pem: string) => pem.slice(pem.indexOf("-----BEGIN PRIVATE KEY-----"));
    expect(await ask(certOf(a) + keyOf(b))).toBe("refused: the private key does not belong to the certificate\n");
    // Nothing but a POST of a PEM is taken, and not a runtime API command sent raw.
    expect(await new Promise<string>((resolve) => {
      const c = connect(`${gw.dir}/cert.sock`, () => c.end("add map keys.map X mallory\n"));
      let data = "";
      c.on("data", (d) => (data += d));
      c.on("close", () => resolve(data));
    })).toMatch(/^HTTP\/1\.[01] 400/);
    // Still served with the certificate it had: handshakes go on.
    expect((await post(`/gateway/eth/rpc-http/${KEY}`, call("eth_chainId"))).status).toBe(200);
    // 8 MiB: refused on its Content-Length, before any of it is read.
    expect(await ask(Buffer.alloc(8 << 20, "A"))).toMatch(/^(refused: longer than 65536 bytes)?$/);
    // More idle connections asked of the socket than the whole gateway may hold (past its few and
    // their backlog, connect fails at once): a public call is answered.
    const tries = await Promise.all(Array.from({ length: 2100 }, () => new Promise<Socket | undefined>((resolve) => {
      const s = connect(`${gw.dir}/cert.sock`, () => resolve(s));
      s.on("error", () => resolve(undefined));
    })));
    const idle = tries.filter((s) => s !== undefined);
    expect(idle.length).toBeLessThan(100);
    try {
      expect((await post(`/gateway/eth/rpc-http/${KEY}`, call("eth_chainId"), {}, AbortSignal.timeout(5000))).status).toBe(200);
    } finally {
      idle.forEach((s) => s.destroy());
    }
    // Once HAProxy has seen them go, the socket takes a good pair again.
    await new Promise((r) => setTimeout(r, 500));
    expect(await ask(a)).toBe("ok\n");
  }, 60_000);

  it("the runtime API's show map prints digests, not keys", async () => {
    const out = await new Promise<string>((resolve, reject) => {
      const s = connect(`${gw.dir}/admin.sock`, () => s.write(`show map ${gw.dir}/keys.map\n`));
      let data = "";
      s.on("data", (d) => (data += d));
      s.on("end", () => resolve(data));
      s.on("error", reject);
    });
    expect(out).toMatch(/alice/);
    expect(out).not.toContain(KEY);
  });
});

/** A request as bytes: `parts[0]` carries the head and the start of the body, later parts the rest. */
function rawRequest(method: string, path: string, host: string, headers: Record<string, string>, body: string[]): string[] {
  const length = body.reduce((n, b) => n + Buffer.byteLength(b), 0);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), ...(length ? [`Content-Length: ${length}`] : []), "", ""].join("\r\n");
  return [head + (body[0] ?? ""), ...body.slice(1)];
}

describe("no request skips the body checks", () => {
  // The first part alone reads as an allowed call; the second repeats "method", and Go's decoder
  // (geth, CometBFT) takes the last one.
  const split = (allowed: string, denied: string) => [`{"jsonrpc":"2.0","id":1,"method":"${allowed}","params":[],"pad":"`, `xx","method":"${denied}"}`];

  it("a POST with an Upgrade header (no Connection: upgrade) is waited for whole: a later duplicate method is refused", async () => {
    expect(await reaching(async () => {
      const a = await rawExchange(gw.httpsPort, "localhost", rawRequest("POST", `/gateway/eth/rpc-http/${KEY}`, "localhost", { "Content-Type": "application/json", Upgrade: "websocket" }, split("eth_chainId", "debug_traceTransaction")), { gapMs: 400 });
      expect(a.status).toBe(403);
      expect(JSON.parse(a.body).error.message).toMatch(/debug_traceTransaction is not served/);
      const b = await rawExchange(gw.httpsPort, HOSTS.tendermintRpc, rawRequest("POST", "/", HOSTS.tendermintRpc, { "Content-Type": "application/json", Upgrade: "websocket" }, split("status", "unsafe_flush_mempool")), { gapMs: 400 });
      expect(b.status).toBe(403);
    })).toBe(0);
  });

  it("a WebSocket handshake is relayed as one only on a WebSocket route: elsewhere the node sees a plain GET", async () => {
    const handshake = { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" };
    for (const path of [`/gateway/hub/rpc-http/${KEY}/websocket`, `/gateway/hub/rest/${KEY}/websocket`]) {
      const a = await rawExchange(gw.httpsPort, "localhost", rawRequest("GET", path, "localhost", handshake, []), { waitMs: 1500 });
      expect(a.status, path).toBe(200);
      expect(up.seen.at(-1)!.headers.upgrade, path).toBeUndefined();
    }
  });
});

describe("Tendermint RPC: a body is checked whatever the method", () => {
  const body = (method: string) => JSON.stringify(call(method));

  it("GET or HEAD with a JSON-RPC body, and /v1 paths (CometBFT 1.x), are refused like a POST of the same call", async () => {
    expect(await reaching(async () => {
      for (const method of ["GET", "HEAD"]) {
        for (const path of ["/", "/v1", "/v1/"]) {
          const a = await rawExchange(gw.httpsPort, HOSTS.tendermintRpc, rawRequest(method, path, HOSTS.tendermintRpc, { "Content-Type": "application/json" }, [body("unsafe_flush_mempool")]), { waitMs: 1500 });
          expect(a.status, `${method} ${path}`).toBe(403);
        }
      }
      const batch = JSON.stringify(Array.from({ length: 1001 }, (_, i) => call("status", i)));
      expect((await rawExchange(gw.httpsPort, HOSTS.tendermintRpc, rawRequest("GET", "/", HOSTS.tendermintRpc, {}, [batch]), { waitMs: 1500 })).status).toBe(413);
      expect((await rawExchange(gw.httpsPort, HOSTS.tendermintRpc, rawRequest("GET", "/v1/unsafe_flush_mempool", HOSTS.tendermintRpc, {}, []), { waitMs: 1500 })).status).toBe(403);
      expect((await rawExchange(gw.httpsPort, "localhost", rawRequest("GET", `/gateway/hub/rpc-http/${KEY}/v1`, "localhost", {}, [body("unsafe_flush_mempool")]), { waitMs: 1500 })).status).toBe(403);
      expect((await rawExchange(gw.httpsPort, "localhost", rawRequest("GET", `/gateway/hub/rpc-http/${KEY}/v1/dial_peers`, "localhost", {}, []), { waitMs: 1500 })).status).toBe(403);
      // An encoded slash: a server that decodes the path before routing reads /v1/dial_peers.
      for (const p of ["/v1%2Fdial_peers", "/v1%2fdial_seeds", "/v1%2Funsafe_flush_mempool", "/v1%5Cdial_peers"]) {
        expect((await rawExchange(gw.httpsPort, HOSTS.tendermintRpc, rawRequest("GET", p, HOSTS.tendermintRpc, {}, []), { waitMs: 1500 })).status, p).toBe(400);
        expect((await rawExchange(gw.httpsPort, "localhost", rawRequest("GET", `/gateway/hub/rpc-http/${KEY}${p}`, "localhost", {}, []), { waitMs: 1500 })).status, p).toBe(400);
        expect((await rawExchange(gw.httpsPort, "localhost", rawRequest("GET", `/gateway/hubopen/rpc-http/${KEY}${p}`, "localhost", {}, []), { waitMs: 1500 })).status, p).toBe(400);
      }
    })).toBe(0);
    // REST paths keep theirs: a Cosmos REST path carries an IBC denom as ibc%2F<hash>.
    expect(await reaching(async () => expect((await rawExchange(gw.httpsPort, HOSTS.rest, rawRequest("GET", "/cosmos/bank/v1beta1/denoms_metadata/ibc%2F27394FB0", HOSTS.rest, {}, []), { waitMs: 1500 })).status).toBe(200))).toBe(1);
    expect(up.seen.at(-1)!.url).toBe("/cosmos/bank/v1beta1/denoms_metadata/ibc%2F27394FB0");
    // An allowed call sent the same way is relayed, body and all.
    expect(await reaching(async () => expect((await rawExchange(gw.httpsPort, HOSTS.tendermintRpc, rawRequest("GET", "/", HOSTS.tendermintRpc, {}, [body("status")]), { waitMs: 1500 })).status).toBe(200))).toBe(1);
    expect(up.seen.at(-1)!.body).toContain('"status"');
  });
});

describe("port 80 normalises paths before it matches them", () => {
  const get = (path: string) => new Promise<{ status: number; location?: string }>((resolve, reject) => {
    const r = httpRequest({ host: "127.0.0.1", port: gw.httpPort, path, headers: { Host: "localhost" } }, (res) => (res.resume(), resolve({ status: res.statusCode!, location: res.headers.location })));
    r.on("error", reject);
    r.end();
  });

  it("/%67ateway/..., /x/../gateway/..., /./gateway/..., /GATEWAY/... are refused like /gateway/..., never redirected", async () => {
    expect(await reaching(async () => {
      for (const p of [`/%67ateway/eth/rpc-http/${KEY}`, `/x/../gateway/eth/rpc-http/${KEY}`, `/GATEWAY/eth/rpc-http/${KEY}`, `/x/%2e%2e/gateway/eth/rpc-http/${KEY}`, `/./gateway/eth/rpc-http/${KEY}`, `/%2e/gateway/eth/rpc-http/${KEY}`, `/%2Fgateway/eth/rpc-http/${KEY}`, `/x/gateway/eth/rpc-http/${KEY}`]) {
        const a = await get(p);
        expect(a.status, p).toBe(403);
        expect(a.location, p).toBeUndefined();
      }
    })).toBe(0);
  });

  it("a redirect to the stack's own name goes to its root: no path, so no key, is echoed; a public hostname keeps its path", async () => {
    for (const p of [`/x/${KEY}`, `/%2E%2E/${KEY}?k=${KEY}`, "/"]) {
      const a = await get(p);
      expect(a.status, p).toBe(301);
      expect(a.location, p).toMatch(/^https:\/\/localhost(:\d+)?\/$/);
    }
    const r = await new Promise<string | undefined>((resolve, reject) => {
      const q = httpRequest({ host: "127.0.0.1", port: gw.httpPort, path: "/cosmos/bank/v1beta1/supply", headers: { Host: HOSTS.rest } }, (res) => (res.resume(), resolve(res.headers.location)));
      q.on("error", reject);
      q.end();
    });
    expect(r).toMatch(/^https:\/\/rest\.hub\.test(:\d+)?\/cosmos\/bank\/v1beta1\/supply$/);
  });

  it("only /.well-known/acme-challenge/<token> reaches the ACME responder, and as a plain token path", async () => {
    expect(await reaching(async () => {
      for (const p of ["/.well-known/acme-challenge/../../etc/passwd", "/.well-known/acme-challenge/..%2f..%2fetc%2fpasswd", "/.well-known/acme-challenge/%2e%2e/%2e%2e/etc", "/.well-known/acme-challenge/a%2fb", "/.well-known/acme-challenge/"]) {
        expect([301, 404], p).toContain((await get(p)).status);
      }
    })).toBe(0);
    expect(await reaching(async () => expect((await get("/.well-known/acme-challenge/Tk3n_-x9")).status).toBe(200))).toBe(1);
    expect(up.seen.at(-1)!.url).toBe("/.well-known/acme-challenge/Tk3n_-x9");
  });
});
