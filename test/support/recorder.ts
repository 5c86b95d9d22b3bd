/**
 * An upstream that records everything that reaches it: HTTP requests (method, path, body size)
 * and WebSocket connections and messages, on one loopback port. JSON-RPC calls get a result
 * (a batch gets one per call), so the gateway's health check and relays succeed.
 */
import { createServer, type IncomingMessage } from "node:http";
import { WebSocketServer } from "ws";
import { listenLoopback } from "./http.js";

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly bytes: number;
  readonly body: string;
  readonly headers: IncomingMessage["headers"];
}

export interface Recorder {
  readonly url: string;
  readonly wsUrl: string;
  /** Client requests (the gateway's health checks are left out). */
  readonly seen: Seen[];
  /** WebSocket messages received, by size, and their text (the first 2000 characters). */
  readonly wsMessages: number[];
  readonly wsTexts: string[];
  /** The headers of each WebSocket upgrade that reached it. */
  readonly wsHeaders: IncomingMessage["headers"][];
  wsOpen(): number;
  /** From now on, accept connections and requests (health checks too) but never answer them. */
  freeze(): void;
  stop(): Promise<void>;
}

const reply = (call: any) => ({ jsonrpc: "2.0", id: call?.id ?? null, result: "0x1" });

export async function startRecorder(): Promise<Recorder> {
  const seen: Seen[] = [];
  const wsMessages: number[] = [];
  const wsTexts: string[] = [];
  const wsHeaders: IncomingMessage["headers"][] = [];
  let frozen = false;
  const server = createServer((req, res) => {
    if (frozen) return;
    const chunks: Buffer[] = [];
    req.on("data", (d) => chunks.push(d));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      if (!String(req.headers["user-agent"]).includes("healthcheck")) seen.push({ method: req.method!, url: req.url!, bytes: Buffer.byteLength(body), body: body.slice(0, 2000), headers: req.headers });
      let parsed: any;
      try {
        parsed = JSON.parse(body);
      } catch {}
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(reply) : reply(parsed)));
    });
  });
  const wss = new WebSocketServer({ server, maxPayload: 256 * 1024 * 1024 });
  wss.on("connection", (ws, req) => {
    wsHeaders.push(req.headers);
    ws.on("message", (d: Buffer) => {
      wsMessages.push(d.length);
      wsTexts.push(String(d).slice(0, 2000));
      let call: any;
      try {
        call = JSON.parse(String(d));
      } catch {}
      ws.send(JSON.stringify(Array.isArray(call) ? call.map(reply) : reply(call)));
    });
  });
  const url = await listenLoopback(server);
  return {
    url,
    wsUrl: url.replace(/^http/, "ws"),
    seen,
    wsMessages,
    wsTexts,
    wsHeaders,
    wsOpen: () => wss.clients.size,
    freeze: () => {
      frozen = true;
    },
    stop: async () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
