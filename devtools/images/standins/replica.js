// Replicas of one chain, for the fault run: two real nodes that follow one chain cannot run here
// (no peers, no consensus client, no registry), so these stand in for geth and Juno. Every replica
// serves the same deterministic chain: block n's hash, parent hash and timestamp are functions of
// the chain id and n. The network's head comes from the chain source (chain-source.js, reached as
// RPCSTACK_CHAIN_SOURCE on the stack's network); a replica follows it by importing at most
// CATCH_UP blocks per tick, so one that was stopped, frozen or cut off lags and catches up as a
// node does. Its head, the source's genesis and the sends it accepted are kept in its data
// directory. What it does not prove: that a real client follows, reorgs, or answers these calls
// the same way.
"use strict";
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const { WebSocketServer } = require("ws");
const { jsonRpcListener, rpcError, listen, http } = require("./lib.js");

const SOURCE = process.env.RPCSTACK_CHAIN_SOURCE || "http://chain-source:7300";
const TICK_MS = 250;
const CATCH_UP = Number(process.env.RPCSTACK_REPLICA_CATCH_UP || 4);
/** Blocks below the head that count as final (a PoS chain's is two epochs; short here, for the cache to have some). */
const FINAL_DEPTH = 8;

/**
 * A replica's state and its chain. `layer` names which head of the source it follows (l1 or l2);
 * `dataDir` keeps head.json and sends.log.
 */
function replica({ client, layer, chainId, dataDir }) {
  fs.mkdirSync(dataDir, { recursive: true });
  const stateFile = path.join(dataDir, "replica-head.json");
  const sendsFile = path.join(dataDir, "replica-sends.log");
  const kept = fs.existsSync(stateFile) ? JSON.parse(fs.readFileSync(stateFile, "utf8")) : {};
  const s = { head: kept.head ?? 0, genesis: kept.genesis, seconds: kept.seconds, sourceHead: undefined, sourceAt: 0 };
  const save = () => fs.writeFileSync(stateFile, JSON.stringify({ head: s.head, genesis: s.genesis, seconds: s.seconds }));

  async function tick() {
    try {
      const r = await fetch(`${SOURCE}/head`, { signal: AbortSignal.timeout(1000) });
      const src = await r.json();
      s.genesis = src.genesis;
      s.seconds = src[`${layer}Seconds`];
      s.sourceHead = src[layer];
      s.sourceAt = Date.now();
      if (s.head < s.sourceHead) {
        s.head = Math.min(s.sourceHead, s.head + CATCH_UP);
        save();
      }
    } catch {
      // Cut off from the network: the head stays where it is.
    }
  }
  setInterval(tick, TICK_MS);
  tick();

  const hash = (n) => `0x${crypto.createHash("sha256").update(`${chainId}:${n}`).digest("hex")}`;
  const time = (n) => (s.genesis ?? 0) + n * (s.seconds ?? 1);
  const final = () => Math.max(0, s.head - FINAL_DEPTH);
  const known = (n) => Number.isSafeInteger(n) && n >= 0 && n <= s.head;
  /** Sends are kept (one JSON line each) so that a test can tell which node took which. */
  const accept = (kind, payload) => {
    const txHash = `0x${crypto.createHash("sha256").update(JSON.stringify(payload)).digest("hex")}`;
    fs.appendFileSync(sendsFile, `${JSON.stringify({ kind, txHash, at: Date.now() })}\n`);
    return txHash;
  };
  const sends = () => (fs.existsSync(sendsFile) ? fs.readFileSync(sendsFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
  return { state: s, hash, time, final, known, accept, sends, client };
}

const hex = (n) => `0x${n.toString(16)}`;

/** The EVM calls the gateway, readiness and the fault run make. */
function evmHandler(r, chainId) {
  const evmBlock = (n) => (r.known(n) ? { number: hex(n), hash: r.hash(n), parentHash: n ? r.hash(n - 1) : `0x${"0".repeat(64)}`, timestamp: hex(r.time(n)), transactions: [] } : null);
  const tag = (t) => {
    if (t === "latest" || t === "pending" || t === undefined) return r.state.head;
    if (t === "finalized" || t === "safe") return r.final();
    if (t === "earliest") return 0;
    if (typeof t === "string" && /^0x[0-9a-f]+$/i.test(t)) return Number.parseInt(t, 16);
    throw rpcError(-32602, `invalid block tag ${JSON.stringify(t)}`);
  };
  return (method, params) => {
    switch (method) {
      case "eth_chainId":
        return hex(chainId);
      case "net_version":
        return String(chainId);
      case "web3_clientVersion":
        return `${r.client}/replica`;
      case "eth_syncing":
        return false;
      case "eth_blockNumber":
        return hex(r.state.head);
      case "eth_getBlockByNumber":
        return evmBlock(tag(params[0]));
      case "eth_getBlockByHash": {
        for (let n = r.state.head; n >= 0 && n > r.state.head - 10000; n--) if (r.hash(n) === params[0]) return evmBlock(n);
        return null;
      }
      case "eth_getBalance":
        return "0x0";
      case "eth_sendRawTransaction":
        if (typeof params[0] !== "string" || !/^0x[0-9a-f]*$/i.test(params[0])) throw rpcError(-32602, "invalid raw transaction");
        return r.accept("eth_sendRawTransaction", params[0]);
      default:
        throw rpcError(-32601, `the method ${method} does not exist/is not available`);
    }
  };
}

/** The Starknet calls the gateway, readiness and the fault run make. */
function starknetHandler(r, chainId) {
  const blockOf = (id) => {
    const b = Array.isArray(id) ? id[0] : id?.block_id ?? id;
    if (b === "latest" || b === "pre_confirmed" || b === "pending") return r.state.head;
    if (b === "l1_accepted") return r.final();
    if (b && typeof b === "object" && "block_number" in b) return b.block_number;
    if (b && typeof b === "object" && "block_hash" in b) {
      for (let n = r.state.head; n >= 0 && n > r.state.head - 10000; n--) if (r.hash(n) === b.block_hash) return n;
      return -1;
    }
    throw rpcError(-32602, "Invalid params");
  };
  return (method, params) => {
    switch (method) {
      case "starknet_chainId":
        return chainId;
      case "starknet_specVersion":
        return "0.9.0";
      case "starknet_syncing":
        return false;
      case "starknet_blockNumber":
        return r.state.head;
      case "starknet_blockHashAndNumber":
        return { block_hash: r.hash(r.state.head), block_number: r.state.head };
      case "starknet_getBlockWithTxHashes": {
        const n = blockOf(params);
        if (!r.known(n)) throw rpcError(24, "Block not found");
        return { status: n <= r.final() ? "ACCEPTED_ON_L1" : "ACCEPTED_ON_L2", block_hash: r.hash(n), parent_hash: n ? r.hash(n - 1) : "0x0", block_number: n, timestamp: r.time(n), transactions: [] };
      }
      case "starknet_addInvokeTransaction":
        return { transaction_hash: r.accept("starknet_addInvokeTransaction", params) };
      default:
        throw rpcError(-32601, "Method not found");
    }
  };
}

/** JSON-RPC over WebSocket: one reply per request message. */
function attachWs(server, handle, wsPath) {
  new WebSocketServer({ server, path: wsPath }).on("connection", (c) =>
    c.on("message", (d) => {
      let msg;
      try {
        msg = JSON.parse(String(d));
        c.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id ?? null, result: handle(msg.method, msg.params ?? []) }));
      } catch (e) {
        c.send(JSON.stringify({ jsonrpc: "2.0", id: msg?.id ?? null, error: { code: e.code ?? -32700, message: e.message } }));
      }
    }),
  );
}

/** GET /standin/sends: the sends this replica accepted (the fault run counts them per node). */
const standinRoutes = (r, extra = () => false) => (req, res) => {
  const p = (req.url || "").split("?")[0];
  if (req.method === "GET" && p === "/standin/sends") return res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(r.sends())), true;
  return extra(req, res);
};

/** The HTTP listener: JSON-RPC, the stand-in's own routes, and `extra` (health endpoints). */
const rpcServer = (r, handle, extra) => http.createServer(jsonRpcListener(async (m, p) => handle(m, p), standinRoutes(r, extra)));

module.exports = { replica, evmHandler, starknetHandler, attachWs, rpcServer, listen, FINAL_DEPTH };
