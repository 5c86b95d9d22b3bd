#!/usr/bin/env node
// The network the fault run's replicas follow (replica.js): GET /head answers the genesis time,
// the seconds between blocks of each layer and each layer's head, all from the clock. It stands
// for the rest of the world's nodes, which no fault of the run touches.
"use strict";
const { listen, http } = require("./lib.js");

const genesis = Math.floor(Date.now() / 1000);
const l1Seconds = Number(process.env.CHAIN_L1_SECONDS || 1);
const l2Seconds = Number(process.env.CHAIN_L2_SECONDS || 1);
const head = (seconds) => Math.floor((Date.now() / 1000 - genesis) / seconds);
listen(
  http.createServer((req, res) => {
    if (req.url !== "/head") return void res.writeHead(404).end();
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ genesis, l1Seconds, l2Seconds, l1: head(l1Seconds), l2: head(l2Seconds) }));
  }),
  "0.0.0.0",
  Number(process.env.PORT || 7300),
  "chain source",
);
for (const sig of ["SIGTERM", "SIGINT"]) process.on(sig, () => process.exit(0));
