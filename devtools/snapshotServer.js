#!/usr/bin/env node
// A snapshot publisher for the restore tests: serves the files of a folder over HTTPS at
// /<mode>/<file>, where the mode picks the server's behaviour, and logs every request (GET
// /requests returns the log as JSON). Modes:
//   plain        200 with Content-Length and ETag; Range requests get 206 (like the publishers' CDNs)
//   noranges     200 always, even to a Range request (a server that cannot resume)
//   cut          like plain, but the first full download is cut after half of the file
//   cutnoranges  like noranges, but the first download is cut after half of the file
//   slow         like plain, at --rate bytes per second (so a test can watch a restore run)
//   stall        like plain, but the first full download stops sending after half of the file and
//                keeps the connection open
// Plain JavaScript for Debian's Node 18 (the end-to-end image) and the tests' own Node.
"use strict";
const fs = require("fs");
const https = require("https");
const path = require("path");

function createSnapshotServer({ dir, cert, rate = 1 << 20, onRequest = () => {} }) {
  const requests = [];
  const cut = new Set();
  const server = https.createServer({ cert, key: cert }, (req, res) => {
    const url = new URL(req.url, "https://x");
    requests.push({ method: req.method, path: url.pathname, range: req.headers.range || null });
    onRequest(requests[requests.length - 1]);
    if (url.pathname === "/requests") return void res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(requests));
    const m = /^\/(plain|noranges|cut|cutnoranges|slow|stall)\/([A-Za-z0-9._-]+)$/.exec(url.pathname);
    const file = m && path.join(dir, m[2]);
    if (!m || !fs.existsSync(file)) return void res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
    const [, mode, name] = m;
    // A cut happens once per path: the retry that follows gets the whole file.
    const size = fs.statSync(file).size;
    const etag = `"${size}-${name}"`;
    const ranges = !mode.includes("noranges");
    const range = ranges ? /^bytes=(\d+)-$/.exec(req.headers.range || "") : null;
    const start = range ? Number(range[1]) : 0;
    const headers = { "Content-Type": "application/zstd", ETag: etag, ...(ranges ? { "Accept-Ranges": "bytes" } : {}) };
    if (range) {
      if (start >= size) return void res.writeHead(416, { "Content-Range": `bytes */${size}` }).end();
      res.writeHead(206, { ...headers, "Content-Length": size - start, "Content-Range": `bytes ${start}-${size - 1}/${size}` });
    } else {
      res.writeHead(200, { ...headers, "Content-Length": size });
    }
    if (req.method === "HEAD") return void res.end();
    const cutAt = (mode.startsWith("cut") || mode === "stall") && !range && !cut.has(url.pathname) ? (cut.add(url.pathname), Math.floor(size / 2)) : undefined;
    const end = cutAt === undefined ? "end" : mode === "stall" ? "stall" : "cut";
    stream(fs.createReadStream(file, { start, end: (cutAt ?? size) - 1, highWaterMark: 64 << 10 }), res, mode === "slow" ? rate : 0, end);
  });
  return { server, requests };
}

/** Sends a file stream, at `rate` bytes/s when given; at its end: "end" the response, "cut" the connection, or "stall" (send nothing more). */
function stream(src, res, rate, end) {
  const t0 = Date.now();
  let sent = 0;
  // After each chunk: wait for the socket, then for the clock where a rate is set.
  const next = () => {
    const ahead = rate ? (sent / rate) * 1000 - (Date.now() - t0) : 0;
    if (ahead > 0) setTimeout(() => src.resume(), ahead);
    else src.resume();
  };
  src.on("data", (chunk) => {
    sent += chunk.length;
    src.pause();
    if (res.write(chunk)) next();
    else res.once("drain", next);
  });
  src.on("end", () => (end === "cut" ? res.socket.destroy() : end === "end" ? res.end() : undefined));
  src.on("error", () => res.socket.destroy());
}

if (require.main === module) {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : fallback;
  };
  // One JSON line per request on stdout: what `docker logs` shows a test.
  const onRequest = (r) => process.stdout.write(`request ${JSON.stringify(r)}\n`);
  const { server } = createSnapshotServer({ dir: arg("dir", "/srv"), cert: fs.readFileSync(arg("cert", "/cert.pem")), rate: Number(arg("rate", String(1 << 20))), onRequest });
  const port = Number(arg("port", "8443"));
  server.listen(port, "0.0.0.0", () => process.stdout.write(`snapshot server on :${port}\n`));
  for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
}

module.exports = { createSnapshotServer };
