/**
 * The load of a fault run: clients calling the gateway over HTTP (reads and sends) and over
 * WebSocket (reads), half on each chain, each at its own pace, every call recorded; and a poller
 * reading each node's head straight from the node, which is what "the best head" and "fit" are
 * judged against. A WebSocket client closed with 1012 reconnects and sends its read again, as a
 * client acting on that code would.
 */
import { Agent, request } from "node:https";
import { WebSocket } from "ws";
import type { FaultStack } from "./stack.js";
import type { CallRecord, HeadSample, Layer } from "./report.js";

const CALL_TIMEOUT_MS = 30_000;
const HEAD_POLL_MS = 250;

type Kind = CallRecord["kind"];
const HTTP_MIX: readonly Kind[] = ["head", "block", "head", "chainId", "head", "block", "send", "head"];
const WS_MIX: readonly Kind[] = ["head", "block", "head", "chainId"];

const hex = (n: number) => `0x${n.toString(16)}`;

/**
 * What an error answer said, to tell the gateway's refusals apart (a JSON-RPC error's message, e.g.
 * "STRK node unavailable or not synced" from the node-down gate) from HAProxy's own pages: the
 * first 200 characters of anything else.
 */
export function errorDetail(text: string): string {
  try {
    const m = JSON.parse(text)?.error?.message;
    if (typeof m === "string") return m;
  } catch {
    // not JSON
  }
  return text.slice(0, 200);
}

/** The call for each kind and chain, and how its answer is read. */
function callOf(chain: Layer, kind: Kind, n: number, unique: string): { method: string; params: unknown[]; read: (result: any) => Partial<CallRecord> } {
  if (chain === "l1") {
    switch (kind) {
      case "head":
        return { method: "eth_blockNumber", params: [], read: (r) => ({ head: Number.parseInt(r, 16) }) };
      case "block":
        return { method: "eth_getBlockByNumber", params: [hex(n), false], read: (r) => ({ block: { n, hash: r?.hash } }) };
      case "chainId":
        return { method: "eth_chainId", params: [], read: () => ({}) };
      case "send":
        return { method: "eth_sendRawTransaction", params: [`0x${Buffer.from(unique).toString("hex")}`], read: () => ({}) };
    }
  }
  switch (kind) {
    case "head":
      return { method: "starknet_blockNumber", params: [], read: (r) => ({ head: Number(r) }) };
    case "block":
      return { method: "starknet_getBlockWithTxHashes", params: [{ block_number: n }], read: (r) => ({ block: { n, hash: r?.block_hash } }) };
    case "chainId":
      return { method: "starknet_chainId", params: [], read: () => ({}) };
    case "send":
      return {
        method: "starknet_addInvokeTransaction",
        params: [{ type: "INVOKE", version: "0x1", sender_address: "0x1", calldata: [], signature: [], max_fee: "0x0", nonce: `0x${Buffer.from(unique).toString("hex")}` }],
        read: (r) => ({ ...(r?.transaction_hash ? {} : { error: "no transaction hash" }) }),
      };
  }
}

export class Load {
  readonly calls: CallRecord[] = [];
  readonly heads: HeadSample[] = [];
  private stopped = false;
  private readonly running: Promise<void>[] = [];
  private readonly sockets = new Set<WebSocket>();
  private readonly agents: Agent[] = [];

  constructor(private readonly stack: FaultStack, private readonly clients: number, private readonly paceMs: number) {}

  /** The best head the poller last saw on a chain. */
  private best(chain: Layer): number | undefined {
    const latest = new Map<string, number | undefined>();
    for (const s of this.heads) if (s.chain === chain) latest.set(s.node, s.head);
    const heads = [...latest.values()].filter((h): h is number => h !== undefined);
    return heads.length ? Math.max(...heads) : undefined;
  }

  /** A final block to ask for: well below the best head. */
  private finalBlock(chain: Layer): number | undefined {
    const best = this.best(chain);
    if (best === undefined || best < 50) return undefined;
    return best - 10 - Math.floor(Math.random() * 30);
  }

  start(): this {
    this.running.push(this.pollHeads());
    for (let i = 0; i < this.clients; i++) {
      const chain: Layer = i % 2 ? "l2" : "l1";
      this.running.push(i < this.clients / 2 ? this.httpClient(`http-${i}`, chain) : this.wsClient(`ws-${i}`, chain));
    }
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const s of this.sockets) s.terminate();
    await Promise.all(this.running);
    for (const a of this.agents) a.destroy();
  }

  private sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  private async pollHeads(): Promise<void> {
    while (!this.stopped) {
      await Promise.all(
        this.stack.nodes.map(async (n) => {
          const method = n.chain === "l1" ? "eth_blockNumber" : "starknet_blockNumber";
          const head = await fetch(n.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: [] }), signal: AbortSignal.timeout(1000) })
            .then((r) => r.json())
            .then((b) => (b.result === undefined ? undefined : Number(b.result)), () => undefined);
          this.heads.push({ at: Date.now(), chain: n.chain, node: n.service, head });
        }),
      );
      await this.sleep(HEAD_POLL_MS);
    }
  }

  private post(agent: Agent, chain: Layer, body: string): Promise<{ status: number; text: string }> {
    const url = new URL(`${this.stack.gateway.url}/gateway/${this.stack.paths[chain]}/rpc-http/${this.stack.key}`);
    return new Promise((resolve, reject) => {
      const req = request(url, { method: "POST", agent, headers: { "Content-Type": "application/json" }, timeout: CALL_TIMEOUT_MS }, (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", reject);
      req.end(body);
    });
  }

  private async httpClient(id: string, chain: Layer): Promise<void> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: this.stack.gateway.ca });
    this.agents.push(agent);
    for (let i = 0; !this.stopped; i++) {
      const kind = HTTP_MIX[i % HTTP_MIX.length];
      const n = this.finalBlock(chain);
      if (kind === "block" && n === undefined) continue;
      const c = callOf(chain, kind, n ?? 0, `${id}-${i}-${Date.now()}`);
      const sentAt = Date.now();
      const base = { client: id, chain, via: "http" as const, kind, sentAt };
      try {
        const r = await this.post(agent, chain, JSON.stringify({ jsonrpc: "2.0", id: i, method: c.method, params: c.params }));
        const body = r.status === 200 ? JSON.parse(r.text) : undefined;
        const error = r.status !== 200 ? `http ${r.status}` : body?.error ? `rpc error ${body.error.code}` : undefined;
        this.calls.push({ ...base, doneAt: Date.now(), ...(error ? { error, detail: errorDetail(r.text) } : c.read(body.result)) });
      } catch (e) {
        const why = (e as Error).message;
        this.calls.push({ ...base, doneAt: Date.now(), error: why === "timeout" ? "timeout" : why.includes("socket hang up") || why.includes("ECONNRESET") ? "closed without an answer" : `network: ${why}` });
      }
      await this.sleep(this.paceMs);
    }
  }

  /** Opens a socket, retrying until it opens or the run stops. */
  private async connect(chain: Layer): Promise<WebSocket | undefined> {
    const url = `${this.stack.gateway.url.replace(/^https/, "wss")}/gateway/${this.stack.paths[chain]}/rpc/${this.stack.key}?secret=null`;
    while (!this.stopped) {
      const ws = new WebSocket(url, { ca: this.stack.gateway.ca });
      const opened = await new Promise<boolean>((resolve) => {
        ws.once("open", () => resolve(true));
        ws.once("error", () => resolve(false));
        ws.once("unexpected-response", () => resolve(false));
      });
      if (opened) {
        this.sockets.add(ws);
        ws.once("close", () => this.sockets.delete(ws));
        return ws;
      }
      ws.terminate();
      await this.sleep(250);
    }
    return undefined;
  }

  private async wsClient(id: string, chain: Layer): Promise<void> {
    let ws = await this.connect(chain);
    for (let i = 0; !this.stopped && ws; i++) {
      // Closed between two calls (its node went away while the client waited): a client that
      // acts on the close reconnects before its next call.
      if (ws.readyState !== WebSocket.OPEN) {
        ws = await this.connect(chain);
        if (!ws) break;
      }
      const kind = WS_MIX[i % WS_MIX.length];
      const n = this.finalBlock(chain);
      if (kind === "block" && n === undefined) continue;
      const c = callOf(chain, kind, n ?? 0, `${id}-${i}`);
      const sentAt = Date.now();
      const base = { client: id, chain, via: "ws" as const, kind, sentAt };
      let resent = false;
      for (;;) {
        const answer = await new Promise<{ result?: any; error?: string; closed?: number }>((resolve) => {
          const timer = setTimeout(() => resolve({ error: "timeout" }), CALL_TIMEOUT_MS);
          const done = (v: { result?: any; error?: string; closed?: number }) => (clearTimeout(timer), ws!.off("message", onMessage), ws!.off("close", onClose), resolve(v));
          const onMessage = (d: Buffer) => {
            const m = JSON.parse(String(d));
            done(m.error ? { error: `rpc error ${m.error.code}` } : { result: m.result });
          };
          const onClose = (code: number) => done({ closed: code });
          ws!.on("message", onMessage);
          ws!.on("close", onClose);
          ws!.send(JSON.stringify({ jsonrpc: "2.0", id: i, method: c.method, params: c.params }));
        });
        if (answer.closed !== undefined) {
          // Closed by the run's own end (judged only if it had waited long: faults.ts).
          if (this.stopped) {
            this.calls.push({ ...base, doneAt: Date.now(), error: "unanswered when the run ended" });
            break;
          }
          // 1012: the node went away; reconnect (to a node in rotation) and ask again.
          if (answer.closed === 1012 && !this.stopped) {
            resent = true;
            ws = await this.connect(chain);
            if (ws) continue;
          }
          this.calls.push({ ...base, doneAt: Date.now(), error: `ws closed ${answer.closed}`, resent });
          ws = this.stopped ? undefined : await this.connect(chain);
          break;
        }
        this.calls.push({ ...base, doneAt: Date.now(), resent, ...(answer.error ? { error: answer.error } : c.read(answer.result)) });
        break;
      }
      await this.sleep(this.paceMs);
    }
    ws?.close();
  }

  /** What each node says, straight from the node, for every block a client was answered. */
  async truth(): Promise<Record<Layer, Map<number, string[]>>> {
    const out: Record<Layer, Map<number, string[]>> = { l1: new Map(), l2: new Map() };
    for (const chain of ["l1", "l2"] as const) {
      const blocks = [...new Set(this.calls.filter((c) => c.chain === chain && c.block).map((c) => c.block!.n))];
      for (const n of blocks) {
        const c = callOf(chain, "block", n, "");
        const hashes = await Promise.all(
          this.stack.nodes
            .filter((x) => x.chain === chain)
            .map((x) =>
              fetch(x.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: c.method, params: c.params }) })
                .then((r) => r.json())
                .then((b) => c.read(b.result).block?.hash, () => undefined),
            ),
        );
        out[chain].set(n, hashes.filter((h): h is string => typeof h === "string"));
      }
    }
    return out;
  }
}
