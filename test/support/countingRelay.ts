/**
 * A counting relay in front of a node: forwards every request unchanged and counts the client
 * calls that reached the node (the gateway's health checks and the cache's finality polls are
 * counted apart). It can also stand in for the node's finality tags, so tests can put the final
 * block below the head or take the tag away.
 */
import { createServer, request, type Server } from "node:http";
import { listenLoopback } from "./http.js";

export interface RelayFinality {
  /** Answer the finality poll (`finalized` / `l1_accepted`) with this block number instead. */
  finalized?: number;
  /** Answer the finality poll with an error, as a node without the tag would. */
  noTag?: boolean;
}

export interface CountingRelay {
  readonly url: string;
  /** Client requests that reached the node, with the methods of their calls. */
  readonly calls: { methods: string[]; body: string }[];
  /** Finality polls seen. */
  polls(): number;
  finality: RelayFinality;
  stop(): Promise<void>;
}

const POLL_METHODS = new Set(["eth_getBlockByNumber", "starknet_getBlockWithTxHashes", "eth_blockNumber"]);

export async function startCountingRelay(target: string): Promise<CountingRelay> {
  const t = new URL(target);
  const calls: { methods: string[]; body: string }[] = [];
  let polls = 0;
  const finality: RelayFinality = {};
  const forward = (body: string, headers: Record<string, string>, done: (status: number, text: string) => void) => {
    const up = request({ host: t.hostname, port: t.port, path: t.pathname, method: "POST", headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d) => chunks.push(d));
      res.on("end", () => done(res.statusCode ?? 502, Buffer.concat(chunks).toString()));
    });
    up.on("error", () => done(502, ""));
    up.end(body);
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d) => chunks.push(d));
    req.on("end", () => {
      let body = Buffer.concat(chunks).toString();
      const agent = String(req.headers["user-agent"] ?? "");
      let parsed: any;
      try {
        parsed = JSON.parse(body);
      } catch {}
      const list = Array.isArray(parsed) ? parsed : [parsed];
      if (agent.includes("cache-poll")) {
        polls++;
        const m = parsed?.method;
        if (POLL_METHODS.has(m) && finality.noTag && m !== "eth_blockNumber") {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: parsed.id, error: { code: -32602, message: "invalid block tag" } }));
          return;
        }
        if (finality.finalized !== undefined && m === "eth_getBlockByNumber") body = JSON.stringify({ ...parsed, params: [`0x${finality.finalized.toString(16)}`, false] });
        if (finality.finalized !== undefined && m === "starknet_getBlockWithTxHashes") body = JSON.stringify({ ...parsed, params: [{ block_number: finality.finalized }] });
      } else if (!agent.includes("healthcheck")) {
        calls.push({ methods: list.map((c: any) => String(c?.method)), body });
      }
      forward(body, { "content-type": "application/json", "user-agent": agent }, (status, text) => {
        res.writeHead(status, { "content-type": "application/json" }).end(text);
      });
    });
  });
  return {
    url: await listenLoopback(server),
    calls,
    polls: () => polls,
    finality,
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
