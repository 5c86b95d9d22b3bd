/**
 * A counting relay in front of a node: forwards every request unchanged and counts the client
 * calls that reached the node (the gateway's health checks and the cache's finality polls are
 * counted apart). It can also stand in for the node's finality tags, so tests can put the final
 * block below the head or take the tag away, hold the polls back, or make the node slow.
 */
import { createServer, request, type Server } from "node:http";
import { listenLoopback } from "./http.js";

export interface RelayFinality {
  /** Answer the finality poll (`finalized` / `l1_accepted`) with this block number instead. */
  finalized?: number;
  /** Answer the finality poll with an error, as a node without the tag would. */
  noTag?: boolean;
  /** While set, the cache's polls wait for it: the gateway does not see what happens meanwhile. */
  hold?: Promise<void>;
}

export interface CountingRelay {
  readonly url: string;
  /** Client requests that reached the node, with the methods of their calls. */
  readonly calls: { methods: string[]; body: string }[];
  /** Finality polls seen. */
  polls(): number;
  finality: RelayFinality;
  /** Client calls wait this long before they are forwarded (a slow node). */
  delayMs: number;
  /** How long the node's answer to a client call with this body is held before it is sent back (0: not held). */
  holdAnswer?: (body: string) => number;
  /** The most client requests the node had in hand at once since the last reset. */
  maxConcurrent(): number;
  resetConcurrent(): void;
  stop(): Promise<void>;
}

/** The finality tags the cache polls; only calls naming them are answered for the node here. */
const TAGS: Record<string, string> = { eth_getBlockByNumber: "finalized", starknet_getBlockWithTxHashes: "l1_accepted" };

export async function startCountingRelay(target: string): Promise<CountingRelay> {
  const t = new URL(target);
  const calls: { methods: string[]; body: string }[] = [];
  let polls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const finality: RelayFinality = {};
  const relay: { delayMs: number; holdAnswer?: (body: string) => number } = { delayMs: 0 };
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
      const tagged = (m: string) => TAGS[m] !== undefined && (Array.isArray(parsed?.params) ? parsed.params[0] : parsed?.params?.block_id) === TAGS[m];
      let delay = 0;
      let client = false;
      if (agent.includes("cache-poll")) {
        polls++;
        const m = parsed?.method;
        if (tagged(m) && finality.noTag) {
          res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: parsed.id, error: { code: -32602, message: "invalid block tag" } }));
          return;
        }
        if (finality.finalized !== undefined && tagged(m) && m === "eth_getBlockByNumber") body = JSON.stringify({ ...parsed, params: [`0x${finality.finalized.toString(16)}`, false] });
        if (finality.finalized !== undefined && tagged(m) && m === "starknet_getBlockWithTxHashes") body = JSON.stringify({ ...parsed, params: [{ block_number: finality.finalized }] });
      } else if (!agent.includes("healthcheck")) {
        calls.push({ methods: list.map((c: any) => String(c?.method)), body });
        delay = relay.delayMs;
        client = true;
      }
      const hold = agent.includes("cache-poll") ? finality.hold : undefined;
      if (client) maxInFlight = Math.max(maxInFlight, ++inFlight);
      const held = client ? (relay.holdAnswer?.(body) ?? 0) : 0;
      const go = () =>
        forward(body, { "content-type": "application/json", "user-agent": agent }, (status, text) => {
          const answer = () => {
            if (client) inFlight--;
            res.writeHead(status, { "content-type": "application/json" }).end(text);
          };
          if (held) setTimeout(answer, held);
          else answer();
        });
      Promise.resolve(hold).then(() => (delay ? setTimeout(go, delay) : go()));
    });
  });
  return {
    url: await listenLoopback(server),
    calls,
    polls: () => polls,
    finality,
    get delayMs() {
      return relay.delayMs;
    },
    set delayMs(ms: number) {
      relay.delayMs = ms;
    },
    get holdAnswer() {
      return relay.holdAnswer;
    },
    set holdAnswer(f: ((body: string) => number) | undefined) {
      relay.holdAnswer = f;
    },
    maxConcurrent: () => maxInFlight,
    resetConcurrent: () => {
      maxInFlight = inFlight;
    },
    stop: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
