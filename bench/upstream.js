// Fixed-reply upstreams for the benchmark, so the proxies and not a node are measured:
// HTTP on argv[2] answers every request with one JSON-RPC result; WebSocket on argv[3]
// answers every message with one.
const { createServer } = require("node:http");
const { WebSocketServer } = require("ws");

const REPLY = '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}';
const http = createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "Content-Type": "application/json", "Content-Length": REPLY.length }).end(REPLY));
});
http.keepAliveTimeout = 60_000;
http.listen(Number(process.argv[2]), "127.0.0.1");

const wss = new WebSocketServer({ host: "127.0.0.1", port: Number(process.argv[3]) });
wss.on("connection", (ws) => ws.on("message", () => ws.send(REPLY)));
