/**
 * A real geth --dev chain on loopback ports the test picks (geth built from its Go module at the
 * stack's pin: devtools/clients.ts), HTTP and WebSocket JSON-RPC with the stack's public APIs
 * (eth, net, web3). Blocks are sealed only when a transaction comes (--dev.period 0), so the
 * chain stands still between the calls a test makes.
 */
import { clientBinary } from "../../devtools/clients.js";
import { freePort, jsonRpc, start, waitFor } from "./net.js";

export interface GethDev {
  readonly url: string;
  readonly wsUrl: string;
  /** The dev account geth holds unlocked. */
  readonly account: string;
  /** Sends a transaction from the dev account and resolves with its receipt once sealed. */
  transact(tx: { to?: string; data?: string; value?: string }): Promise<any>;
  stop(): Promise<void>;
}

export async function startGethDev(): Promise<GethDev> {
  const [http, ws, auth, p2p] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const child = start(clientBinary("geth"), [
    "--dev", "--dev.period", "0", "--ipcdisable", "--nodiscover", "--maxpeers", "0", "--port", String(p2p), "--verbosity", "2",
    "--http", "--http.addr", "127.0.0.1", "--http.port", String(http), "--http.api", "eth,net,web3",
    "--ws", "--ws.addr", "127.0.0.1", "--ws.port", String(ws), "--ws.api", "eth,net,web3",
    "--authrpc.addr", "127.0.0.1", "--authrpc.port", String(auth),
  ]);
  const url = `http://127.0.0.1:${http}`;
  try {
    const [account] = await waitFor("geth --dev", async () => ((await jsonRpc(url, "eth_accounts")) as string[])?.length ? await jsonRpc(url, "eth_accounts") : undefined, 60_000);
    const transact = async (tx: { to?: string; data?: string; value?: string }) => {
      const hash = await jsonRpc(url, "eth_sendTransaction", [{ from: account, gas: "0x100000", ...tx }]);
      return waitFor(`receipt of ${hash}`, () => jsonRpc(url, "eth_getTransactionReceipt", [hash]).then((r) => r ?? undefined), 20_000);
    };
    return { url, wsUrl: `ws://127.0.0.1:${ws}`, account, transact, stop: () => child.stop() };
  } catch (e) {
    await child.stop();
    throw new Error(`${(e as Error).message}\n${child.output()}`);
  }
}
