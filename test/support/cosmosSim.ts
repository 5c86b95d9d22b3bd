/**
 * A small Tendermint RPC + Cosmos REST simulator: JSON-RPC POST, URI GET (/status, /block),
 * WebSocket at /websocket, REST paths, /health. It records every request it sees.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { WebSocketServer } from "ws";

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: string;
}

export interface CosmosSim {
  readonly url: string;
  readonly port: number;
  readonly seen: SeenRequest[];
  stop(): Promise<void>;
}

const NODE_INFO = {
  protocol_version: { p2p: "8", block: "11", app: "0" },
  id: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
  listen_addr: "tcp://0.0.0.0:26656",
  network: "cosmoshub-4",
  version: "0.38.12",
  channels: "40202122233038606100",
  moniker: "rpcstack-sim",
  other: { tx_index: "on", rpc_address: "tcp://0.0.0.0:26657" },
};

export const SIM_HEIGHT = 24_000_123;

function status() {
  return {
    node_info: NODE_INFO,
    sync_info: {
      latest_block_hash: "A".repeat(64),
      latest_app_hash: "B".repeat(64),
      latest_block_height: String(SIM_HEIGHT),
      latest_block_time: new Date().toISOString(),
      earliest_block_hash: "C".repeat(64),
      earliest_app_hash: "D".repeat(64),
      earliest_block_height: "1",
      earliest_block_time: "2019-12-11T16:11:34Z",
      catching_up: false,
    },
    validator_info: {
      address: "0".repeat(40),
      pub_key: { type: "tendermint/PubKeyEd25519", value: "A".repeat(43) + "=" },
      voting_power: "0",
    },
  };
}

function tendermint(method: string, params: any): unknown {
  switch (method) {
    case "status":
      return status();
    case "health":
      return {};
    case "abci_info":
      return { response: { data: "GaiaApp", version: "v21.0.0", last_block_height: String(SIM_HEIGHT), last_block_app_hash: "qg==" } };
    case "block":
      return { height: params?.height ?? String(SIM_HEIGHT) };
    default:
      throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
  }
}

export async function startCosmosSim(): Promise<CosmosSim> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      // The gateway's health checks are not client traffic.
      if (req.headers["user-agent"] !== "rpcstack-gateway-healthcheck") seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const url = new URL(req.url!, "http://sim");
      const json = (status: number, obj: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(obj));
      if (req.method === "POST" && url.pathname === "/") {
        const msg = JSON.parse(body || "{}");
        try {
          return json(200, { jsonrpc: "2.0", id: msg.id, result: tendermint(msg.method, msg.params) });
        } catch (e) {
          return json(200, { jsonrpc: "2.0", id: msg.id, error: { code: (e as any).code, message: (e as Error).message } });
        }
      }
      if (req.method === "GET" && (url.pathname === "/status" || url.pathname === "/health" || url.pathname === "/block")) {
        const params = Object.fromEntries(url.searchParams);
        return json(200, { jsonrpc: "2.0", id: -1, result: tendermint(url.pathname.slice(1), params) });
      }
      if (url.pathname === "/cosmos/base/tendermint/v1beta1/blocks/latest") {
        return json(200, { block: { header: { chain_id: "cosmoshub-4", height: String(SIM_HEIGHT) } } });
      }
      if (url.pathname === "/node_info" || url.pathname === "/cosmos/base/tendermint/v1beta1/node_info") {
        return json(200, { default_node_info: NODE_INFO, application_version: { name: "gaia", version: "v21.0.0" } });
      }
      if (url.pathname === "/cosmos/tx/v1beta1/txs" && req.method === "POST") {
        return json(200, { tx_response: { code: 0, txhash: "E".repeat(64) } });
      }
      json(404, { code: 5, message: `Not Implemented: ${url.pathname}` });
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    seen.push({ method: "UPGRADE", url: req.url!, headers: req.headers, body: "" });
    if (req.url !== "/websocket") return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on("message", (data) => {
        const msg = JSON.parse(String(data));
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: tendermint(msg.method, msg.params) }));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    stop: () =>
      new Promise((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An HTTP endpoint whose status the test sets: a node's readiness check. */
export async function startSwitch(initial = 200): Promise<{ url: string; set(status: number): void; stop(): Promise<void> }> {
  let status = initial;
  const server = createServer((_req, res) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify({ status })));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/ready`,
    set: (s) => (status = s),
    stop: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
