#!/usr/bin/env node
// Many addresses attacking a gateway at once, in a process of its own (so the test's own client,
// and the node, measure the gateway and not this load): each address on loopback holds WebSockets
// with an unfinished message, HTTP/2 streams with slow bodies, and connections that never read
// what comes back, and reopens whatever the gateway closes, until it is sent SIGTERM.
//   node crowd.js PORT ADDRESSES KEY_PREFIX   (address i uses key KEY_PREFIX + i, 4 digits)
// Plain JavaScript: run by the tests' own Node, with the package's node_modules.
"use strict";
const http2 = require("http2");
const tls = require("tls");
const WebSocket = require("ws");

const [port, addresses, keyPrefix] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]];
if (!port || !addresses || !keyPrefix) {
  console.error("usage: node crowd.js PORT ADDRESSES KEY_PREFIX");
  process.exit(2);
}
const WS_PER_ADDRESS = 24;
const STREAMS_PER_ADDRESS = 32;
const SLOW_READERS_PER_ADDRESS = 6;
const REOPEN_MS = 50;
const address = (i) => `127.0.${1 + Math.floor(i / 200)}.${10 + (i % 200)}`;
const keyOf = (i) => `${keyPrefix}${String(i).padStart(4, "0")}`;
const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });
const opened = { ws: 0, h2: 0, reader: 0 };

/** Keeps `count` of what `open` opens: each time one ends, another is opened. */
function hold(count, kind, open) {
  const again = () => {
    let ended = false;
    opened[kind]++;
    open(() => {
      if (ended) return;
      ended = true;
      setTimeout(again, REOPEN_MS);
    });
  };
  for (let k = 0; k < count; k++) again();
}

// The first 10 bytes of a 1,000-byte masked text frame, and never the rest.
const unfinished = Buffer.concat([Buffer.from([0x81, 0xfe, 0x03, 0xe8, 1, 2, 3, 4]), Buffer.alloc(10, 0x20)]);

function unfinishedMessage(i, done) {
  const ws = new WebSocket(`wss://localhost:${port}/gateway/eth/rpc/${keyOf(i)}`, { rejectUnauthorized: false, localAddress: address(i) });
  ws.on("open", () => ws._socket.write(unfinished));
  ws.on("error", done);
  ws.on("close", done);
  ws.on("unexpected-response", (req) => (req.destroy(), done()));
}

function slowBodies(i, done) {
  const session = http2.connect(`https://localhost:${port}`, { rejectUnauthorized: false, localAddress: address(i) });
  session.on("error", done);
  session.on("close", done);
  const stream = () => {
    if (session.closed || session.destroyed) return;
    const s = session.request({ ":method": "POST", ":path": `/gateway/eth/rpc-http/${keyOf(i)}`, "content-type": "application/json", "content-length": "60000" });
    s.on("error", () => {});
    s.on("response", () => {});
    s.on("close", () => setTimeout(stream, REOPEN_MS));
    s.write(`{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":["${"x".repeat(1000)}`);
  };
  for (let k = 0; k < STREAMS_PER_ADDRESS; k++) stream();
}

function neverReads(i, done) {
  const s = tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false, localAddress: address(i) }, () => {
    s.pause();
    s.write(`POST /gateway/eth/rpc-http/${keyOf(i)} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`.repeat(20));
  });
  s.on("error", done);
  s.on("close", done);
}

for (let i = 0; i < addresses; i++) {
  hold(WS_PER_ADDRESS, "ws", (done) => unfinishedMessage(i, done));
  hold(1, "h2", (done) => slowBodies(i, done));
  hold(SLOW_READERS_PER_ADDRESS, "reader", (done) => neverReads(i, done));
}
process.on("SIGTERM", () => {
  console.log(`crowd: opened ${JSON.stringify(opened)}`);
  process.exit(0);
});
