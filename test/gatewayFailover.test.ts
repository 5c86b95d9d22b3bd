/**
 * A chain served by two nodes, on Debian's real HAProxy with the generated configuration: a node
 * out of rotation gets no calls, reads that fail on one node are answered by the other, sends are
 * never sent twice, and WebSocket clients of a node that goes away are told to reconnect.
 */
import { createServer } from "node:http";
import { connect as http2Connect } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { GatewayChain } from "../gateway/build.js";
import { startGateway, haproxyVersion, type RunningGateway } from "./support/haproxy.js";
import { eventually, listenLoopback } from "./support/http.js";
import { stopEach } from "./support/net.js";
import { startTestNode, type TestNode } from "./support/testNodes.js";

const KEY = "failover_key_0123456789abcdefghijkLMNOP";
let a: TestNode;
let b: TestNode;
let gw: RunningGateway;
let metrics: ReturnType<typeof createServer>;

beforeAll(async () => {
  [a, b] = [await startTestNode("a"), await startTestNode("b")];
  metrics = createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/plain" }).end('rpcstack_node_in_rotation{layer="l1",node="a"} 1\n'));
  const metricsUrl = await listenLoopback(metrics);
  const nodes = [a, b].map((n) => ({ name: n.name, rpcHttp: n.url, rpcWs: n.wsUrl, healthUrl: n.healthUrl }));
  const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: a.url, rpcWs: a.wsUrl }, healthUrl: a.healthUrl, nodes }];
  gw = await startGateway(chains, [{ name: "t", key: KEY }], { nodeMetricsUrl: `${metricsUrl}/metrics`, cache: undefined });
}, 60_000);

afterAll(async () => {
  await stopEach(gw, a, b);
  metrics?.close();
});

type Answer = { status: number; body: any };
const call = (body: unknown): Promise<Answer> =>
  fetch(`${gw.base}/gateway/eth/rpc-http/${KEY}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }).then(
    async (r) => ({ status: r.status, body: await r.json().catch(() => undefined) }),
    (e) => ({ status: 0, body: String(e?.cause?.message ?? e) }),
  );
const rpc = (method: string, param = "") => ({ jsonrpc: "2.0", id: 1, method, params: param ? [param] : [] });
const who = async () => (await call(rpc("web3_clientVersion"))).body?.result;
/** Waits until the gateway has both nodes in rotation again (each answers a call). */
const bothIn = () => eventually("both nodes in rotation", async () => new Set(await Promise.all(Array.from({ length: 8 }, who))).size, (n) => n === 2, 15_000);
const count = (n: TestNode, entry: string) => n.calls.filter((c) => c === entry).length;
/** Puts a node back as it started (answering, healthy), also after a test that failed half-way. */
const restore = async (n: TestNode) => {
  await n.kill().catch(() => undefined);
  await n.revive();
  n.setHealthy(true);
};
/** Runs `fn` with both nodes in rotation at its start, and puts `n` back after it, whatever happens. */
async function failing(n: TestNode, fn: () => Promise<void>): Promise<void> {
  await bothIn();
  try {
    await fn();
  } finally {
    await restore(n);
  }
  await bothIn();
}

describe(`a chain with two nodes, on ${haproxyVersion()}`, () => {
  it("both nodes serve; a node whose check fails leaves rotation, the chain answers 503 only with none fit, and nodes come back on their own", async () => {
    await bothIn();
    try {
      a.setHealthy(false);
      await eventually("node a out", async () => (await Promise.all(Array.from({ length: 6 }, who))).every((w) => w === "node/b"), (ok) => ok);
      const before = a.calls.length;
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => call(rpc("eth_getBalance", `0x${i}`))));
      expect(answers.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(a.calls.length).toBe(before);
      b.setHealthy(false);
      const none = await eventually("no node fit", () => call(rpc("eth_blockNumber")), (r) => r.status === 503);
      expect(none.body.error.message).toMatch(/node unavailable/);
    } finally {
      a.setHealthy(true);
      b.setHealthy(true);
    }
    await bothIn();
  });

  it("reads held by a node that froze are answered by the other once it is marked down; sends it held are not sent again (502)", async () => {
    await failing(a, async () => {
      a.freeze();
      const reads = Array.from({ length: 8 }, (_, i) => `0xr${i}`);
      const sends = Array.from({ length: 8 }, (_, i) => `0xs${i}`);
      const pending = [...reads.map((p) => call(rpc("eth_getBalance", p))), ...sends.map((p) => call(rpc("eth_sendRawTransaction", p)))];
      await eventually("calls reached the frozen node", async () => reads.some((p) => count(a, `eth_getBalance:${p}`)) && sends.some((p) => count(a, `eth_sendRawTransaction:${p}`)), (ok) => ok);
      a.setHealthy(false);
      const answers = await Promise.all(pending);
      const readAnswers = answers.slice(0, reads.length);
      const sendAnswers = answers.slice(reads.length);
      expect(readAnswers.map((r) => r.status)).toEqual(Array(reads.length).fill(200));
      for (const [i, p] of sends.entries()) {
        const entry = `eth_sendRawTransaction:${p}`;
        // Each send reached exactly one node; the frozen one's came back as 502, never to b.
        expect(count(a, entry) + count(b, entry), entry).toBe(1);
        expect(sendAnswers[i].status, entry).toBe(count(a, entry) ? 502 : 200);
      }
      // The reads the frozen node held were answered by b.
      for (const p of reads.filter((p) => count(a, `eth_getBalance:${p}`))) expect(count(b, `eth_getBalance:${p}`)).toBe(1);
    });
  }, 30_000);

  it("a batch holding a send is not sent again; a batch of reads is", async () => {
    await failing(a, async () => {
      a.freeze();
      const batch = (i: number, send: boolean) => [rpc("eth_blockNumber", `0xb${i}`), send ? rpc("eth_sendRawTransaction", `0xbs${i}`) : rpc("eth_getBalance", `0xbr${i}`)];
      const pending = Array.from({ length: 12 }, (_, i) => call(batch(i, i % 2 === 0)));
      const onFrozen = () => Array.from({ length: 12 }, (_, i) => i).filter((i) => count(a, `eth_blockNumber:0xb${i}`));
      await eventually("batches of both kinds reached the frozen node", async () => onFrozen().some((i) => i % 2 === 0) && onFrozen().some((i) => i % 2 === 1), (ok) => ok);
      a.setHealthy(false);
      const answers = await Promise.all(pending);
      for (let i = 0; i < 12; i++) {
        const onA = count(a, `eth_blockNumber:0xb${i}`) > 0;
        const onB = count(b, `eth_blockNumber:0xb${i}`);
        if (i % 2 === 0) {
          expect(onB + Number(onA), `batch ${i} with a send reached one node`).toBe(1);
          expect(answers[i].status).toBe(onA ? 502 : 200);
        } else {
          expect(answers[i].status, `batch ${i} of reads`).toBe(200);
          expect(onB).toBe(1);
        }
      }
    });
  }, 30_000);

  it("a call not known to be a read (sends under other names, an unknown method), alone or batched with a read, is never sent to a second node", async () => {
    await failing(a, async () => {
      a.freeze();
      const methods = ["eea_sendRawTransaction", "priv_distributeRawTransaction", "mev_sendBundle", "acme_doSomething"];
      const bodies = methods.flatMap((m) => Array.from({ length: 3 }, (_, i) => (i === 2 ? [rpc("eth_chainId"), rpc(m, `0x${m}${i}`)] : rpc(m, `0x${m}${i}`))));
      const entries = bodies.map((b) => ((x) => `${x.method}:${x.params[0]}`)(Array.isArray(b) ? b[1] : b));
      const pending = bodies.map(call);
      await eventually("calls reached the frozen node", async () => entries.some((e) => count(a, e)), (ok) => ok);
      a.setHealthy(false);
      const answers = await Promise.all(pending);
      for (const [i, e] of entries.entries()) {
        expect(count(a, e) + count(b, e), e).toBe(1);
        expect(answers[i].status, e).toBe(count(a, e) ? 502 : 200);
      }
    });
  }, 30_000);

  it("a batch holding a refused call is never sent to a second node, reads in it included; its node's failure still answers the refused call", async () => {
    await failing(a, async () => {
      a.freeze();
      const pending = Array.from({ length: 8 }, (_, i) => call([rpc("eth_blockNumber", `0xsp${i}`), { ...rpc("debug_x"), id: "r" }]));
      const onFrozen = () => Array.from({ length: 8 }, (_, i) => i).filter((i) => count(a, `eth_blockNumber:0xsp${i}`));
      await eventually("split batches reached the frozen node", async () => onFrozen().length, (n) => n > 0);
      a.setHealthy(false);
      const answers = await Promise.all(pending);
      for (let i = 0; i < 8; i++) {
        const onA = count(a, `eth_blockNumber:0xsp${i}`);
        expect(onA + count(b, `eth_blockNumber:0xsp${i}`), `split batch ${i} reached one node`).toBe(1);
        expect(answers[i].status).toBe(onA ? 502 : 200);
        expect(answers[i].body[1]).toEqual({ jsonrpc: "2.0", id: "r", error: { code: -32601, message: "method debug_x is not served by this gateway" } });
      }
    });
  }, 30_000);

  it("over HTTP/2, a send its frozen node held gets 502, not a refused stream (which tells a client to send it again)", async () => {
    await failing(a, async () => {
      const session = http2Connect(gw.base, { rejectUnauthorized: false });
      const h2 = (param: string) =>
        new Promise<number | string>((resolve) => {
          const r = session.request({ ":method": "POST", ":path": `/gateway/eth/rpc-http/${KEY}`, "content-type": "application/json" });
          let status = 0;
          r.on("response", (h) => (status = Number(h[":status"])));
          r.on("data", () => {});
          r.on("close", () => resolve(status || `reset ${r.rstCode}`));
          r.on("error", () => {});
          r.end(JSON.stringify(rpc("eth_sendRawTransaction", param)));
        });
      try {
        // Streams after the first on a connection are the ones HAProxy would refuse.
        expect(await h2("0xwarm")).toBe(200);
        a.freeze();
        const sends = Array.from({ length: 6 }, (_, i) => `0xh${i}`);
        const pending = sends.map(h2);
        await eventually("sends reached the frozen node", async () => sends.some((p) => count(a, `eth_sendRawTransaction:${p}`)), (ok) => ok);
        a.setHealthy(false);
        const answers = await Promise.all(pending);
        for (const [i, p] of sends.entries()) {
          const entry = `eth_sendRawTransaction:${p}`;
          // Never twice. One still connecting to the frozen node when it was marked down reached
          // neither: on 3.2 it comes back empty like one the node held, so it is not sent again
          // either, and its client gets the 502 that says it may have gone out.
          expect(count(a, entry) + count(b, entry), entry).toBeLessThanOrEqual(1);
          expect(answers[i], entry).toBe(count(b, entry) ? 200 : 502);
        }
      } finally {
        session.close();
      }
    });
  }, 30_000);

  it("a node that refuses connections before its check notices: every call goes to the other node, sends too (they never left the gateway)", async () => {
    await failing(a, async () => {
      await a.kill();
      const sends = Array.from({ length: 6 }, (_, i) => `0xc${i}`);
      const answers = await Promise.all([...sends.map((p) => call(rpc("eth_sendRawTransaction", p))), ...Array.from({ length: 6 }, () => call(rpc("eth_blockNumber")))]);
      expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
      for (const p of sends) expect(count(b, `eth_sendRawTransaction:${p}`)).toBe(1);
    });
  }, 30_000);

  describe("WebSockets", () => {
    const open = async () => {
      const ws = new WebSocket(`wss://localhost:${gw.httpsPort}/gateway/eth/rpc/${KEY}?secret=null`, { rejectUnauthorized: false });
      const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
      ws.on("error", () => {});
      await new Promise((r, j) => (ws.once("open", r), ws.once("unexpected-response", (_q, res) => j(new Error(`upgrade answered ${res.statusCode}`)))));
      const ask = (m: string) => new Promise<any>((r) => (ws.once("message", (d) => r(JSON.parse(String(d)))), ws.send(JSON.stringify(rpc(m)))));
      const node = (await ask("web3_clientVersion")).result === "node/a" ? a : b;
      return { ws, closed, ask, node };
    };

    it("a socket whose node is killed is closed with 1012 (service restart); the reconnect lands on the other node", async () => {
      await bothIn();
      const s = await open();
      const other = s.node === a ? b : a;
      try {
        await s.node.kill();
        expect(await s.closed).toBe(1012);
        const again = await open();
        expect(again.node).toBe(other);
        again.ws.close();
      } finally {
        await restore(s.node);
      }
      await bothIn();
    }, 30_000);

    /** Freezes a socket's node (after the socket sent it a call, with `sent`), marks it down, and answers the socket's close code. */
    const closedWhenFrozenNodeDown = async (sent: boolean) => {
      await bothIn();
      const s = await open();
      try {
        s.node.freeze();
        if (sent) {
          s.ws.send(JSON.stringify(rpc("eth_blockNumber")));
          await new Promise((r) => setTimeout(r, 300));
        }
        s.node.setHealthy(false);
        return await s.closed;
      } finally {
        await restore(s.node);
        await bothIn();
      }
    };

    // HAProxy 3.2 ends the client's side with the node's when it marks a node down (shutdown-sessions),
    // before ws_gone can write its close frame: the client sees the connection end (1006), and reconnects.
    it("a socket whose node froze is closed (1006, no close frame) once the node is marked down", async () => {
      expect(await closedWhenFrozenNodeDown(false)).toBe(1006);
    }, 30_000);

    it("a socket that sent a call to its frozen node is closed (1006, no close frame) once the node is marked down", async () => {
      expect(await closedWhenFrozenNodeDown(true)).toBe(1006);
    }, 30_000);

    it("a handshake its node fails without an answer is sent to the other node, and the socket relays calls both ways", async () => {
      await bothIn();
      a.dropUpgrades();
      try {
        for (let i = 0; i < 4; i++) {
          const s = await open();
          expect(s.node).toBe(b);
          expect((await s.ask("eth_blockNumber")).result).toBe("0x10");
          s.ws.close();
        }
      } finally {
        a.dropUpgrades(false);
      }
    }, 30_000);

    it("a socket its client closes ends with the client's code, not 1012", async () => {
      const s = await open();
      s.ws.close(1000);
      expect(await s.closed).toBe(1000);
    });
  });

  it("the private metrics port serves each node's rotation state at /metrics/nodes", async () => {
    const r = await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics/nodes`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('rpcstack_node_in_rotation{layer="l1",node="a"} 1');
    expect((await fetch(`http://127.0.0.1:${gw.metricsPort}/metrics`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${gw.metricsPort}/other`)).status).toBe(404);
  });
});
