// Fixed-reply upstreams for the benchmark, so the proxies and not a node are measured:
// HTTP on argv[2] answers every request with one JSON-RPC result; WebSocket on argv[3]
// answers every message with one.
const { createServer } = require("node:http");
const { WebSocketServer } = require("ws");

// With argv[4] "blocks", a call for a block by tag or number gets block 16 (final), so the response
// cache's poll finds a live chain (bench/hit.ts); every other call gets REPLY.
const REPLY = '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}';
const BLOCK = `{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","hash":"0x${"ab".repeat(32)}"}}`;
const blocks = process.argv[4] === "blocks";
const http = createServer((req, res) => {
  let body = "";
  if (blocks) req.setEncoding("utf8").on("data", (d) => (body += d));
  else req.resume();
  req.on("end", () => {
    const out = blocks && body.includes('"eth_getBlockByNumber"') ? BLOCK : REPLY;
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": out.length }).end(out);
  });
});
http.keepAliveTimeout = 60_000;
http.listen(Number(process.argv[2]), "127.0.0.1");

const wss = new WebSocketServer({ host: "127.0.0.1", port: Number(process.argv[3]) });
wss.on("connection", (ws) => ws.on("message", () => ws.send(REPLY)));
