/**
 * Conformance: a set of real JSON-RPC calls, made from a real geth --dev chain (a contract
 * deployed, a transaction that logs, blocks, receipts, reads, calls, and calls geth refuses),
 * replayed through the gateway and straight to geth, compared byte for byte: over HTTP and
 * WebSocket, single calls and batches, with the response cache off and on. Batches with calls the
 * gateway refuses mixed in are compared with geth's answer to the others, the gateway's errors in
 * their places.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { GatewayChain } from "../gateway/build.js";
import { startGateway, type RunningGateway } from "./support/haproxy.js";
import { startGethDev, type GethDev } from "./support/gethDev.js";
import { stopEach } from "./support/net.js";

const KEY = "cnf_Key_2wQe5RtY8uIo1PaS4dFg7HjK0lZx";
// Init code that deploys a contract whose every call logs one word (topic 0x01) and returns 42.
const CONTRACT = "0x6011600c60003960116000f3602a600052600160206000a160206000f3";
const REFUSED = ["admin_nodeInfo", "debug_traceTransaction", "personal_listAccounts", "miner_start", "txpool_content"];

let geth: GethDev;
let plain: RunningGateway;
let cached: RunningGateway;
let calls: object[];

beforeAll(async () => {
  geth = await startGethDev();
  const deployed = await geth.transact({ data: CONTRACT });
  const logged = await geth.transact({ to: deployed.contractAddress, data: "0x01" });
  const paid = await geth.transact({ to: "0x00000000000000000000000000000000000000cc", value: "0x1234" });
  const c = deployed.contractAddress;
  const a = geth.account;
  const params: [string, unknown[]][] = [
    ["eth_chainId", []], ["net_version", []], ["web3_clientVersion", []], ["eth_blockNumber", []], ["eth_syncing", []],
    ["eth_getBlockByNumber", ["0x0", false]], ["eth_getBlockByNumber", [logged.blockNumber, true]], ["eth_getBlockByNumber", ["latest", false]],
    ["eth_getBlockByNumber", ["finalized", false]], ["eth_getBlockByHash", [paid.blockHash, true]], ["eth_getBlockByHash", [`0x${"ab".repeat(32)}`, false]],
    ["eth_getBlockTransactionCountByNumber", [logged.blockNumber]], ["eth_getBlockReceipts", [deployed.blockNumber]],
    ["eth_getTransactionByHash", [logged.transactionHash]], ["eth_getTransactionReceipt", [logged.transactionHash]],
    ["eth_getTransactionByBlockNumberAndIndex", [paid.blockNumber, "0x0"]], ["eth_getTransactionReceipt", [`0x${"00".repeat(32)}`]],
    ["eth_getBalance", [a, "latest"]], ["eth_getBalance", ["0x00000000000000000000000000000000000000cc", paid.blockNumber]],
    ["eth_getTransactionCount", [a, "latest"]], ["eth_getCode", [c, "latest"]], ["eth_getStorageAt", [c, "0x0", "latest"]],
    ["eth_call", [{ to: c, data: "0x" }, "latest"]], ["eth_estimateGas", [{ from: a, to: c, data: "0x01" }]],
    ["eth_getLogs", [{ fromBlock: "0x0", toBlock: "latest" }]], ["eth_getLogs", [{ address: c, topics: [`0x${"00".repeat(31)}01`] }]],
    ["eth_feeHistory", ["0x3", "latest", [25, 75]]], ["eth_gasPrice", []],
    // What geth itself refuses: bad params, a method it does not have, an unknown block tag.
    ["eth_getBlockByNumber", ["xyz", false]], ["eth_getBalance", []], ["eth_noSuchMethod", []], ["eth_getBlockByNumber", ["safe-ish", false]],
  ];
  const ids: unknown[] = [1, "two", 3.5, null, 1e21, "ü"];
  calls = params.map(([method, p], i) => ({ jsonrpc: "2.0", id: ids[i % ids.length] ?? i, method, params: p }));
  const chains: GatewayChain[] = [{ path: "eth", chainId: "ETH1", kind: "evm", upstreams: { rpcHttp: geth.url, rpcWs: geth.wsUrl } }];
  const keys = [{ name: "alice", key: KEY }];
  plain = await startGateway(chains, keys);
  cached = await startGateway(chains, keys, { cache: { maxBytes: 8 << 20, maxObjectBytes: 1 << 20, pollIntervalMs: 200 } });
}, 180_000);

afterAll(async () => {
  await stopEach(plain, cached, geth);
});

const text = async (url: string, body: string) => (await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body })).text();

/** A JSON array's items as the text they were sent in. */
function rawItems(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = -1;
  for (let i = s.indexOf("[") + 1; i < s.length; i++) {
    const c = s[i];
    if (c === '"') {
      if (start < 0) start = i;
      for (i++; s[i] !== '"'; i++) if (s[i] === "\\") i++;
    } else if (c === "{" || c === "[") {
      if (start < 0) start = i;
      depth++;
    } else if (c === "}" || c === "]") {
      if (depth-- === 0) break;
    } else if (c === "," && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = -1;
    } else if (start < 0 && !/\s/.test(c)) start = i;
  }
  if (start >= 0) out.push(s.slice(start, s.lastIndexOf("]")).trim());
  return out;
}

const notServed = (id: unknown, method: string) => JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32601, message: `method ${method} is not served by this gateway` } });

/** A batch with refused calls (one a notification) between the others, and the answer it should get from what geth answers to the others alone. */
function mixed(): { batch: string; others: string; expect(node: string): string } {
  const items: { call: object; refused?: string }[] = [];
  calls.forEach((call, i) => {
    if (i % 6 === 2) items.push({ call: { jsonrpc: "2.0", id: `r${i}`, method: REFUSED[i % REFUSED.length], params: [] }, refused: REFUSED[i % REFUSED.length] });
    items.push({ call });
  });
  items.push({ call: { jsonrpc: "2.0", method: "admin_addPeer", params: ["enode://x"] }, refused: "admin_addPeer" });
  return {
    batch: JSON.stringify(items.map((x) => x.call)),
    others: JSON.stringify(items.filter((x) => !x.refused).map((x) => x.call)),
    expect: (node) => {
      const answers = rawItems(node);
      const out = items.flatMap((x) => (x.refused ? ("id" in x.call ? [notServed((x.call as { id: unknown }).id, x.refused)] : []) : [answers.shift()!]));
      return `[${out.join(",")}]`;
    },
  };
}

async function wsSession(url: string) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => (ws.on("open", resolve), ws.on("error", reject)));
  const waiting: ((s: string) => void)[] = [];
  ws.on("message", (d) => waiting.shift()?.(String(d)));
  return { ask: (t: string) => new Promise<string>((r) => (waiting.push(r), ws.send(t))), close: () => ws.close() };
}

for (const [name, gw] of [["cache off", () => plain], ["cache on", () => cached]] as const) {
  describe(`geth --dev through the gateway, ${name}`, () => {
    const via = () => `${gw().base}/gateway/eth/rpc-http/${KEY}`;

    it("HTTP: single calls (twice: the second may come from the cache), a batch, and a batch with refused calls mixed in", async () => {
      const states: (string | null)[] = [];
      for (const call of [...calls, ...calls]) {
        const body = JSON.stringify(call);
        const res = await fetch(via(), { method: "POST", headers: { "Content-Type": "application/json" }, body });
        states.push(res.headers.get("x-cache"));
        expect(await res.text(), body).toBe(await text(geth.url, body));
      }
      expect(states.includes("HIT")).toBe(name === "cache on");
      const body = JSON.stringify(calls);
      expect(await text(via(), body)).toBe(await text(geth.url, body));
      const m = mixed();
      expect(await text(via(), m.batch)).toBe(m.expect(await text(geth.url, m.others)));
    });

    it("WebSocket: single calls, a batch, and a batch with refused calls mixed in", async () => {
      const [direct, through] = [await wsSession(geth.wsUrl), await wsSession(`wss://localhost:${gw().httpsPort}/gateway/eth/rpc/${KEY}?secret=null`)];
      try {
        for (const call of calls) {
          const body = JSON.stringify(call);
          expect(await through.ask(body), body).toBe(await direct.ask(body));
        }
        expect(await through.ask(JSON.stringify(calls))).toBe(await direct.ask(JSON.stringify(calls)));
        const m = mixed();
        expect(await through.ask(m.batch)).toBe(m.expect(await direct.ask(m.others)));
      } finally {
        direct.close();
        through.close();
      }
    });
  });
}
