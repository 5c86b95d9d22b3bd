/** Clients that keep calling the gateway with one project key each, for the tests that change keys live. */
import { Agent, request } from "node:https";
import WebSocket from "ws";
import type { ProjectKey } from "../../gateway/build.js";
import { eventually } from "./http.js";

/** Where a client calls: the gateway's HTTPS port on `host`, and the chain's path (`eth` unless given). */
export interface KeyClientTarget {
  readonly httpsPort: number;
  readonly host?: string;
  readonly chain?: string;
}

const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] });

/** One key's traffic the whole time: an HTTP call after another on a kept-alive connection, and a WebSocket doing the same. */
export class Client {
  readonly http: number[] = [];
  ws = 0;
  wsClose?: { code: number; reason: string };
  private stopped = false;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  private readonly done: Promise<unknown>[];
  private socket?: WebSocket;
  private closed?: Promise<void>;

  private readonly host: string;
  private readonly chain: string;

  constructor(private readonly g: KeyClientTarget, readonly key: ProjectKey) {
    this.host = g.host ?? "127.0.0.1";
    this.chain = g.chain ?? "eth";
    this.done = [this.httpLoop(), this.wsLoop()];
  }

  call(): Promise<number> {
    return new Promise((resolve) => {
      const req = request({ host: this.host, port: this.g.httpsPort, path: `/gateway/${this.chain}/rpc-http/${this.key.key}`, method: "POST", agent: this.agent, headers: { "Content-Type": "application/json" } }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode!));
      });
      req.on("error", () => resolve(0));
      req.end(body);
    });
  }

  private async httpLoop() {
    while (!this.stopped) this.http.push(await this.call());
  }

  private async wsLoop() {
    const ws = new WebSocket(`wss://${this.host}:${this.g.httpsPort}/gateway/${this.chain}/rpc/${this.key.key}?secret=null`, { rejectUnauthorized: false });
    this.socket = ws;
    const closed = new Promise<void>((r) => ws.on("close", (code, reason) => ((this.wsClose = { code, reason: String(reason) }), r())));
    this.closed = closed;
    ws.on("error", () => {});
    await Promise.race([new Promise((r) => ws.on("open", r)), closed]);
    while (!this.stopped && !this.wsClose) {
      const answered = new Promise<boolean>((r) => (ws.once("message", () => r(true)), closed.then(() => r(false))));
      ws.send(body);
      if (await answered) this.ws++;
    }
  }

  failures() {
    return { http: this.http.filter((s) => s !== 200).length, wsClosed: this.wsClose };
  }

  async stop() {
    this.stopped = true;
    this.socket?.close(1000);
    await Promise.all([...this.done, this.closed]);
    this.agent.destroy();
  }
}

/** Resolves once each client has had `n` answers over HTTP and over its WebSocket. */
export const busy = (n: number, ...cs: Client[]) => eventually("calls under way", async () => cs.map((x) => Math.min(x.http.length, x.ws)), (v) => v.every((x) => x >= n), 30_000);
