/**
 * JSON-RPC nodes (HTTP and WebSocket on one loopback port) that a test can fail on purpose: its
 * health answer switched, frozen (connections accepted, nothing answered), killed (listener and
 * connections closed: refused from then on) and revived on the same port. Each records the calls
 * that reached it and names itself in `web3_clientVersion`, so a test sees which node answered.
 */
import { createServer, type Server } from "node:http";
import { WebSocketServer } from "ws";
import { listenLoopback } from "./http.js";

export interface TestNode {
  readonly name: string;
  readonly url: string;
  readonly wsUrl: string;
  /** 200 while healthy, 503 otherwise: what the gateway checks. */
  readonly healthUrl: string;
  /** Calls received over HTTP as `method:<first param>`, one entry per call (a batch adds each of its calls). */
  readonly calls: string[];
  setHealthy(ok: boolean): void;
  freeze(): void;
  /** From now on, close WebSocket upgrades without an answer (a node dying mid-handshake). */
  dropUpgrades(drop?: boolean): void;
  kill(): Promise<void>;
  revive(): Promise<void>;
  wsOpen(): number;
  stop(): Promise<void>;
}

const answer = (name: string, call: any) => {
  const result = call?.method === "web3_clientVersion" ? `node/${name}` : String(call?.method ?? "").startsWith("eth_send") ? `0x${"ab".repeat(32)}` : "0x10";
  return { jsonrpc: "2.0", id: call?.id ?? null, result };
};

export async function startTestNode(name: string): Promise<TestNode> {
  const calls: string[] = [];
  let healthy = true;
  let frozen = false;
  let drop = false;
  let port = 0;
  let server: Server;
  let wss: WebSocketServer;
  const health = createServer((_req, res) => res.writeHead(healthy ? 200 : 503).end());
  const healthUrl = await listenLoopback(health);

  const listen = async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (d) => chunks.push(d));
      req.on("end", () => {
        let parsed: any;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString());
        } catch {}
        for (const c of Array.isArray(parsed) ? parsed : [parsed]) calls.push(`${c?.method}:${c?.params?.[0] ?? ""}`);
        if (frozen) return;
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map((c) => answer(name, c)) : answer(name, parsed)));
      });
    });
    wss = new WebSocketServer({ noServer: true });
    server.on("upgrade", (req, socket, head) => (drop ? socket.destroy() : wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req))));
    wss.on("connection", (ws) =>
      ws.on("message", (d) => {
        if (frozen) return;
        let call: any;
        try {
          call = JSON.parse(String(d));
        } catch {}
        ws.send(JSON.stringify(answer(name, call)));
      }),
    );
    if (!port) {
      port = Number(new URL(await listenLoopback(server)).port);
    } else {
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    }
  };
  const close = async () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  };
  await listen();

  return {
    name,
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    healthUrl,
    calls,
    setHealthy: (ok) => {
      healthy = ok;
    },
    freeze: () => {
      frozen = true;
    },
    dropUpgrades: (d = true) => {
      drop = d;
    },
    kill: close,
    revive: async () => {
      frozen = false;
      drop = false;
      await listen();
    },
    wsOpen: () => wss.clients.size,
    stop: async () => {
      await close().catch(() => undefined);
      health.closeAllConnections();
      await new Promise<void>((r) => health.close(() => r()));
    },
  };
}
