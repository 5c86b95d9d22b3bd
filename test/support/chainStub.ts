/**
 * A node stub whose head a test sets: answers the calls the readiness program makes (EVM:
 * eth_syncing, eth_blockNumber, eth_getBlockByNumber, eth_chainId; Starknet: starknet_syncing,
 * starknet_getBlockWithTxHashes, starknet_chainId, starknet_blockNumber) with a head block dated
 * now, and can be frozen (connections accepted, never answered).
 */
import { createServer } from "node:http";
import { listenLoopback } from "./http.js";

export interface ChainStub {
  readonly url: string;
  setHead(n: number): void;
  freeze(frozen?: boolean): void;
  stop(): Promise<void>;
}

export async function startChainStub(chainId: string, head = 100): Promise<ChainStub> {
  let frozen = false;
  const hex = (n: number) => `0x${n.toString(16)}`;
  const answer = (method: string): unknown => {
    const now = Math.floor(Date.now() / 1000);
    switch (method) {
      case "eth_syncing":
      case "starknet_syncing":
        return false;
      case "eth_blockNumber":
        return hex(head);
      case "starknet_blockNumber":
        return head;
      case "eth_getBlockByNumber":
        return { number: hex(head), timestamp: hex(now) };
      case "starknet_getBlockWithTxHashes":
        return { block_number: head, timestamp: now, status: "ACCEPTED_ON_L2" };
      case "eth_chainId":
      case "starknet_chainId":
        return chainId;
      default:
        return null;
    }
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (frozen) return;
      const call = JSON.parse(body || "{}");
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: call.id ?? null, result: answer(String(call.method)) }));
    });
  });
  const url = await listenLoopback(server);
  return {
    url,
    setHead: (n) => {
      head = n;
    },
    freeze: (f = true) => {
      frozen = f;
    },
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
