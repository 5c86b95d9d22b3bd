// The part of a Starknet node both L2 stand-ins share: the L1 check over WebSocket (the node's
// L1 chain id must match its network, as Juno and Pathfinder require), a head that grows by a
// block every 2 s and is kept in the data directory, and the JSON-RPC reads the package uses.
"use strict";
const fs = require("fs");
const path = require("path");
const { WebSocketServer, WebSocket } = require("ws");
const { die, rpcError } = require("./lib.js");

const CHAINS = {
  mainnet: { l1: 1n, id: "0x534e5f4d41494e" },
  sepolia: { l1: 11155111n, id: "0x534e5f5345504f4c4941" },
  "sepolia-integration": { l1: 11155111n, id: "0x534e5f494e544547524154494f4e5f5345504f4c4941" },
};

function l1ChainId(client, url, attempt = 0) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    const retry = (why) => {
      ws.terminate();
      if (attempt >= 60) die(client, `cannot reach the L1 node at ${url}: ${why}`);
      process.stderr.write(`${client}: WARN L1 node not reachable yet (${why}); retrying\n`);
      setTimeout(() => resolve(l1ChainId(client, url, attempt + 1)), 1000);
    };
    ws.on("error", (e) => retry(e.message));
    ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] })));
    ws.on("message", (d) => {
      const msg = JSON.parse(d.toString());
      ws.close();
      msg.result ? resolve(BigInt(msg.result)) : retry(JSON.stringify(msg.error));
    });
  });
}

/**
 * Checks L1, then starts producing blocks; returns the JSON-RPC handler `(method, params, path)`.
 * `specVersions` maps each path the node serves to the spec version it answers there, as the real
 * node does (Pathfinder v0.22.3, run here: "0.8.1" on / and /rpc/v0_8, "0.9.0" on /rpc/v0_9,
 * "0.10.2" on /rpc/v0_10).
 */
async function starknetNode({ client, network, ethNode, dataDir, specVersions }) {
  const chain = CHAINS[network] || die(client, `unknown network ${network}`);
  if (!/^wss?:\/\//.test(ethNode || "")) die(client, `the L1 node URL must be ws:// or wss:// (got ${ethNode})`);
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (e) {
    die(client, `data directory ${dataDir} is not writable by uid ${process.getuid()}: ${e.message}`);
  }
  const headFile = path.join(dataDir, "standin-head");
  let head = fs.existsSync(headFile) ? Number(fs.readFileSync(headFile, "utf8")) : 0;
  const l1 = await l1ChainId(client, ethNode);
  if (l1 !== chain.l1) die(client, `mismatched L1 and L2 networks: L1 chain id ${l1}, ${network} needs ${chain.l1}`);
  setInterval(() => fs.writeFileSync(headFile, String(++head)), 2000);
  const startedAt = Math.floor(Date.now() / 1000);
  const hash = (n) => `0x${(0x5a000000 + n).toString(16)}`;
  return function handle(method, params, at) {
    switch (method) {
      case "starknet_chainId": return chain.id;
      case "starknet_specVersion":
        if (!specVersions[at]) throw rpcError(-32601, `no spec version is served at ${at}`);
        return specVersions[at];
      case "starknet_blockNumber": return head;
      case "starknet_blockHashAndNumber": return { block_hash: hash(head), block_number: head };
      case "starknet_syncing": return false;
      case "starknet_getBlockWithTxHashes": {
        const id = Array.isArray(params) ? params[0] : params.block_id;
        const n = typeof id === "object" && id && "block_number" in id ? id.block_number : head;
        if (n > head) throw rpcError(24, "Block not found");
        return { status: "ACCEPTED_ON_L2", block_hash: hash(n), block_number: n, timestamp: startedAt + 2 * n, transactions: [] };
      }
      default: throw rpcError(-32601, "Method not found");
    }
  };
}

/** JSON-RPC over WebSocket, one reply per request message. */
/** WebSocket JSON-RPC on `wsPaths` (every path where absent); each socket answers as its path's version. */
function attachWs(server, handle, wsPaths) {
  const served = (url) => !wsPaths || wsPaths.includes((url || "/").split("?")[0]);
  new WebSocketServer({ server, verifyClient: ({ req }, done) => done(served(req.url), 404) }).on("connection", (c, req) =>
    c.on("message", (d) => {
      let msg;
      try {
        msg = JSON.parse(d.toString());
        c.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: handle(msg.method, msg.params ?? [], (req.url || "/").split("?")[0]) }));
      } catch (e) {
        c.send(JSON.stringify({ jsonrpc: "2.0", id: msg?.id ?? null, error: { code: e.code ?? -32700, message: e.message } }));
      }
    }),
  );
}

module.exports = { starknetNode, attachWs };
