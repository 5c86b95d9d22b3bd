/**
 * A small Starknet JSON-RPC simulator: starknet_syncing walks from syncing to synced one block
 * per call (numbers as integers or hex strings), plus the few reads the indexer and gateway use.
 */
import { createServer, type Server } from "node:http";
import { WebSocketServer } from "ws";
import { listenLoopback } from "./http.js";

export interface StarknetSimOptions {
  /** Block the node starts at and the chain head it catches up to. */
  readonly from: number;
  readonly to: number;
  /** Blocks gained per starknet_syncing call. */
  readonly step?: number;
  /** Encode numbers as hex strings, as older releases did. */
  readonly hex?: boolean;
  /** Reply to starknet_syncing with this instead (malformed-reply tests). */
  readonly syncingOverride?: unknown;
  /** A node with no block yet: starknet_syncing false, the latest block not found (as Juno). */
  readonly emptyChain?: boolean;
  /** Blocks up to this one are accepted on L1 (their status, receipts and the l1_accepted tag). */
  readonly l1Accepted?: number;
  /**
   * Node path -> the spec version served there (what starknet_specVersion answers), as a client
   * release serves them (config/releases.ts); any other path gets 404. Absent: every path, "0.9.0".
   */
  readonly specVersions?: Readonly<Record<string, string>>;
  /** The same for WebSocket paths: one JSON-RPC request per message. Absent: no WebSocket. */
  readonly wsSpecVersions?: Readonly<Record<string, string>>;
}

export interface StarknetSim {
  readonly url: string;
  /** Requests from clients (the gateway's own health checks are left out). */
  /** Calls other than health checks, with the caller's User-Agent (the cache's polls name themselves). */
  readonly calls: { method: string; params: unknown; path: string; agent?: string }[];
  readonly healthChecks: () => number;
  head(): number;
  stop(): Promise<void>;
}

export async function startStarknetSim(opts: StarknetSimOptions): Promise<StarknetSim> {
  let current = opts.from;
  const step = opts.step ?? 1;
  const calls: { method: string; params: unknown; path: string; agent?: string }[] = [];
  let checks = 0;
  const enc = (n: number) => (opts.hex ? `0x${n.toString(16)}` : n);
  const hash = (n: number) => `0x${(0xabc000 + n).toString(16)}`;

  const handle = (method: string, params: any, path: string): unknown => {
    switch (method) {
      case "starknet_syncing": {
        if (opts.syncingOverride !== undefined) return opts.syncingOverride;
        if (opts.emptyChain) return false;
        if (current >= opts.to) return false;
        const status = {
          starting_block_hash: hash(opts.from), starting_block_num: enc(opts.from),
          current_block_hash: hash(current), current_block_num: enc(current),
          highest_block_hash: hash(opts.to), highest_block_num: enc(opts.to),
        };
        current = Math.min(current + step, opts.to);
        return status;
      }
      case "starknet_blockNumber":
        return current;
      case "starknet_chainId":
        return "0x534e5f5345504f4c4941"; // SN_SEPOLIA
      case "starknet_specVersion":
        return opts.specVersions?.[path] ?? opts.wsSpecVersions?.[path] ?? "0.9.0";
      case "starknet_getClassHashAt":
        return `0xc1a55${String((Array.isArray(params) ? params[1] : params?.contract_address) ?? "").slice(2)}`;
      case "starknet_getTransactionReceipt": {
        const h = String(params?.[0] ?? params?.transaction_hash);
        const n = parseInt(h.slice(2, -2), 16);
        const l1 = opts.l1Accepted !== undefined && n <= opts.l1Accepted;
        return { transaction_hash: h, block_number: n, finality_status: l1 ? "ACCEPTED_ON_L1" : "ACCEPTED_ON_L2", execution_status: "SUCCEEDED", events: [], messages_sent: [] };
      }
      case "starknet_getBlockWithTxHashes": {
        if (opts.emptyChain) throw Object.assign(new Error("Block not found"), { code: 24 });
        const id = Array.isArray(params) ? params[0] : params?.block_id;
        if (id === "l1_accepted" && opts.l1Accepted === undefined) throw Object.assign(new Error("Invalid block id"), { code: -32602 });
        const n = id === "l1_accepted" ? opts.l1Accepted! : (id?.block_number ?? current);
        // The head is a few seconds old, as on a live chain; older blocks are dated back from it.
        const timestamp = Math.floor(Date.now() / 1000) - 2 - (current - n) * 2;
        const status = opts.l1Accepted !== undefined && n <= opts.l1Accepted ? "ACCEPTED_ON_L1" : "ACCEPTED_ON_L2";
        return { status, block_hash: hash(n), block_number: n, timestamp, transactions: [`0x${n.toString(16)}01`, `0x${n.toString(16)}02`] };
      }
      case "starknet_getEvents": {
        const n = params?.[0]?.from_block?.block_number ?? current;
        return { events: [{ from_address: params?.[0]?.address, keys: ["0x99"], data: [`0x${n.toString(16)}`], block_number: n }] };
      }
      default:
        throw Object.assign(new Error(`method ${method} not found`), { code: -32601 });
    }
  };

  const server: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/ready/sync") {
      // Juno's own readiness: 200 within its block tolerance, 503 while behind.
      res.writeHead(current >= opts.to && !opts.emptyChain ? 200 : 503).end();
      return;
    }
    const path = (req.url ?? "/").split("?")[0];
    if (opts.specVersions && !Object.hasOwn(opts.specVersions, path)) {
      res.writeHead(404).end();
      return;
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      let msg: any;
      try {
        msg = JSON.parse(body);
      } catch {
        res.writeHead(400, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
        return;
      }
      // A batch is answered call by call, as Juno and Pathfinder answer one.
      const each: any[] = Array.isArray(msg) ? msg : [msg];
      if (req.headers["user-agent"] === "rpcstack-gateway-healthcheck") checks++;
      else for (const m of each) calls.push({ method: m?.method, params: m?.params, path, agent: req.headers["user-agent"] });
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(Array.isArray(msg) ? each.map((m) => answer(m, path)) : answer(msg, path)));
    });
  });
  const answer = (msg: any, path: string): object => {
    try {
      return { jsonrpc: "2.0", id: msg.id, result: handle(msg.method, msg.params, path) };
    } catch (e) {
      return { jsonrpc: "2.0", id: msg.id, error: { code: (e as any).code ?? -32603, message: (e as Error).message } };
    }
  };
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, sock, head) => {
    const path = (req.url ?? "/").split("?")[0];
    if (!opts.wsSpecVersions || !Object.hasOwn(opts.wsSpecVersions, path)) return void sock.destroy();
    wss.handleUpgrade(req, sock, head, (ws) =>
      ws.on("message", (d) => {
        const msg = JSON.parse(d.toString());
        calls.push({ method: msg.method, params: msg.params, path });
        ws.send(JSON.stringify(answer(msg, path)));
      }),
    );
  });
  return {
    url: await listenLoopback(server),
    calls,
    healthChecks: () => checks,
    head: () => current,
    stop: () => new Promise((r) => {
      for (const c of wss.clients) c.terminate();
      server.close(() => r());
    }),
  };
}
