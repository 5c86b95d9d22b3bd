/**
 * The client library for rpcstack gateways. Browser-safe: it uses only fetch, AbortSignal and
 * WebSocket (pass a WebSocket implementation, such as `ws`, on Node versions without one).
 *
 *   const client = createClient({ baseUrl: "https://rpc.example.com", privateKey: process.env.RPC_KEY, chainIds: "STRK" });
 *   const head = await client.sendRelay({ method: "starknet_blockNumber", params: [] });
 *   const info = await createClient({ ..., rpcInterface: "rest", chainIds: "COSMOSHUB" }).sendRelay({ method: "GET", url: "/node_info" });
 */
import { BadgeKeys, type BadgeOptions } from "./badge.js";
import { RelayError } from "./errors.js";
import { subscribeRenewing, type Subscription, type WebSocketLike } from "./subscription.js";

export type { Subscription, WebSocketLike } from "./subscription.js";

export { RelayError, type RelayErrorKind } from "./errors.js";
export type { BadgeOptions } from "./badge.js";

export type RpcInterface = "jsonrpc" | "rest" | "tendermintrpc";

/** Gateway path of the chain ids the package serves; other ids map to their lowercase form. */
export const DEFAULT_CHAIN_PATHS: Readonly<Record<string, string>> = { ETH1: "eth", SEP1: "sep1", STRK: "strk", STRKS: "strks", COSMOSHUB: "cosmoshub" };

export interface ClientOptions {
  /** The gateway, e.g. "https://rpc.example.com". */
  readonly baseUrl: string;
  /** Back end: the project key (read it from the environment, never from source). */
  readonly privateKey?: string;
  /** Front end: short-lived keys from a badge server (see client/badge.ts for the contract). */
  readonly badge?: BadgeOptions;
  /** Uppercase chain id, or several (then each relay names its chainId). */
  readonly chainIds: string | readonly string[];
  readonly rpcInterface?: RpcInterface;
  /** Passed to the gateway as the X-Geolocation header. */
  readonly geolocation?: string;
  /** Per-attempt timeout (30 s). */
  readonly timeoutMs?: number;
  /** Extra attempts for idempotent reads after a connection error, timeout, 502, 503 or 504 (2). */
  readonly retries?: number;
  /** Overrides for chain id -> gateway path. */
  readonly chainPaths?: Readonly<Record<string, string>>;
  /**
   * Starknet chain id -> the JSON-RPC spec version the client library is built for, as the nodes
   * name it (`{ STRK: "v0_8" }`): its calls go to that version's path. Absent: the stack's pinned one.
   */
  readonly specVersions?: Readonly<Record<string, string>>;
  readonly fetch?: typeof fetch;
  readonly WebSocket?: new (url: string) => WebSocketLike;
}

export interface JsonRpcRelay {
  readonly method: string;
  readonly params?: unknown;
  readonly chainId?: string;
}

export interface RestRelay {
  readonly method: "GET" | "POST";
  /** Path after the chain's REST root, e.g. "/node_info" or "/cosmos/base/tendermint/v1beta1/blocks/latest?x=1". */
  readonly url: string;
  readonly data?: unknown;
  readonly chainId?: string;
}

export interface RpcClient {
  sendRelay(relay: JsonRpcRelay | RestRelay): Promise<any>;
  /** One JSON-RPC request over the gateway's WebSocket: one message out, one reply back. */
  sendRelayWs(relay: JsonRpcRelay): Promise<any>;
  /** One WebSocket per subscription; `onMessage` gets every notification's `params`. */
  subscribe(relay: JsonRpcRelay, onMessage: (params: any) => void, onError?: (e: RelayError) => void): Promise<Subscription>;
}

// Methods that change state (or open streams) are never retried.
const NOT_IDEMPOTENT = /send|submit|broadcast|add.*transaction|subscribe|sign|install|uninstall/i;

export function createClient(options: ClientOptions): RpcClient {
  const chainIds = typeof options.chainIds === "string" ? [options.chainIds] : [...options.chainIds];
  if (!chainIds.length) throw new RelayError("http", "createClient: chainIds names no chain");
  if (!options.privateKey === !options.badge) throw new RelayError("http", "createClient: give exactly one of privateKey and badge");
  const bad = chainIds.find((c) => !/^[A-Z0-9]+$/.test(c));
  if (bad) throw new RelayError("http", `createClient: chain id "${bad}" must be uppercase letters and digits`);
  const base = options.baseUrl.replace(/\/+$/, "");
  if (!/^https?:\/\//.test(base)) throw new RelayError("http", `createClient: baseUrl must be an http(s) URL (got "${options.baseUrl}")`);
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retries = options.retries ?? 2;
  const iface = options.rpcInterface ?? "jsonrpc";
  const paths = { ...DEFAULT_CHAIN_PATHS, ...options.chainPaths };
  const specs = options.specVersions ?? {};
  const badSpec = Object.entries(specs).find(([, v]) => !/^v0_[0-9]+$/.test(v));
  if (badSpec) throw new RelayError("http", `createClient: spec version "${badSpec[1]}" for ${badSpec[0]} must be spelled as the nodes name it, like "v0_9"`);
  const badge = options.badge ? new BadgeKeys(options.badge, chainIds, fetchImpl, timeoutMs) : undefined;
  let nextId = 1;

  const key = () => (badge ? badge.get() : Promise.resolve(options.privateKey!));
  const chainOf = (relay: { chainId?: string }) => {
    const id = relay.chainId ?? (chainIds.length === 1 ? chainIds[0] : undefined);
    if (!id) throw new RelayError("http", `sendRelay: this client serves ${chainIds.join(", ")}: name the chainId`);
    if (!chainIds.includes(id)) throw new RelayError("http", `sendRelay: chain ${id} is not one of this client's (${chainIds.join(", ")})`);
    return { id, path: paths[id] ?? id.toLowerCase(), version: specs[id] ? `/${specs[id]}` : "" };
  };
  const headers = (json: boolean): Record<string, string> => ({
    ...(json ? { "Content-Type": "application/json" } : {}),
    Accept: "application/json",
    ...(options.geolocation ? { "X-Geolocation": options.geolocation } : {}),
  });

  async function once(url: (k: string) => string, init: RequestInit, chainId: string): Promise<any> {
    let res: Response;
    const k = await key();
    try {
      res = await fetchImpl(url(k), { ...init, signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      const err = e as Error;
      if (err.name === "TimeoutError" || err.name === "AbortError") throw new RelayError("timeout", `${chainId}: no answer within ${timeoutMs} ms`, { chainId });
      throw new RelayError("connection", `${chainId}: cannot reach ${base} (${(err as any).cause?.code ?? err.message})`, { chainId });
    }
    const text = await res.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const rpcErr = body?.error;
      throw new RelayError("http", `${chainId}: HTTP ${res.status}${rpcErr?.message ? `: ${rpcErr.message}` : ""}`, { status: res.status, code: rpcErr?.code, data: body, chainId });
    }
    return body;
  }

  async function withRetries<T>(idempotent: boolean, attempt: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (e) {
        const err = e as RelayError;
        if (badge && err.status === 401 && i === 0) {
          badge.invalidate();
          continue;
        }
        const transient = err.kind === "connection" || err.kind === "timeout" || [502, 503, 504].includes(err.status ?? 0);
        if (!idempotent || !transient || i >= retries) throw err;
        await new Promise((r) => setTimeout(r, 200 * 2 ** i));
      }
    }
  }

  async function jsonRpc(relay: JsonRpcRelay): Promise<any> {
    const chain = chainOf(relay);
    const id = nextId++;
    const body = await withRetries(!NOT_IDEMPOTENT.test(relay.method), () =>
      once((k) => `${base}/gateway/${chain.path}/rpc-http/${encodeURIComponent(k)}${chain.version}`, { method: "POST", headers: headers(true), body: JSON.stringify({ jsonrpc: "2.0", id, method: relay.method, params: relay.params ?? [] }) }, chain.id),
    );
    if (body?.error) throw new RelayError("jsonrpc", `${chain.id}: ${body.error.message}`, { code: body.error.code, data: body.error.data, chainId: chain.id });
    if (!body || !("result" in body)) throw new RelayError("jsonrpc", `${chain.id}: reply without a JSON-RPC result`, { data: body, chainId: chain.id });
    return body.result;
  }

  async function rest(relay: RestRelay): Promise<any> {
    const chain = chainOf(relay);
    const path = relay.url.startsWith("/") ? relay.url : `/${relay.url}`;
    return withRetries(relay.method === "GET", () =>
      once((k) => `${base}/gateway/${chain.path}/rest/${encodeURIComponent(k)}${path}`, { method: relay.method, headers: headers(relay.data !== undefined), body: relay.data === undefined ? undefined : JSON.stringify(relay.data) }, chain.id),
    );
  }

  async function tendermintUri(relay: RestRelay): Promise<any> {
    const chain = chainOf(relay);
    const path = relay.url.startsWith("/") ? relay.url : `/${relay.url}`;
    const body = await withRetries(true, () => once((k) => `${base}/gateway/${chain.path}/rpc-http/${encodeURIComponent(k)}${path}`, { method: "GET", headers: headers(false) }, chain.id));
    if (body?.error) throw new RelayError("jsonrpc", `${chain.id}: ${body.error.message}`, { code: body.error.code, chainId: chain.id });
    return body?.result ?? body;
  }

  /** Opens the chain's WebSocket, sends the request, resolves with its reply; later messages go to onMessage. */
  async function openWs(relay: JsonRpcRelay, onMessage: (params: any) => void): Promise<{ ws: WebSocketLike; result: any; chainId: string }> {
    const chain = chainOf(relay);
    const Ws = options.WebSocket ?? (globalThis as any).WebSocket;
    if (!Ws) throw new RelayError("connection", "no WebSocket implementation; pass options.WebSocket (e.g. the ws package)");
    const wsUrl = `${base.replace(/^http/, "ws")}/gateway/${chain.path}/rpc/${encodeURIComponent(await key())}${chain.version}?secret=null`;
    const ws: WebSocketLike = new Ws(wsUrl);
    const id = nextId++;
    const result = await new Promise<any>((resolve, reject) => {
      const fail = (e: RelayError) => (clearTimeout(t), ws.close(), reject(e));
      const t = setTimeout(() => fail(new RelayError("timeout", `${chain.id}: no WebSocket reply within ${timeoutMs} ms`, { chainId: chain.id })), timeoutMs);
      ws.onerror = () => fail(new RelayError("connection", `${chain.id}: WebSocket to ${base} failed`, { chainId: chain.id }));
      ws.onopen = () => ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: relay.method, params: relay.params ?? [] }));
      ws.onmessage = (ev) => {
        const msg = JSON.parse(String(ev.data));
        if (msg.id === id) {
          clearTimeout(t);
          if (msg.error) fail(new RelayError("jsonrpc", `${chain.id}: ${msg.error.message}`, { code: msg.error.code, chainId: chain.id }));
          else resolve(msg.result);
        } else if (msg.params !== undefined) onMessage(msg.params);
      };
    });
    return { ws, result, chainId: chain.id };
  }

  /**
   * A browser does not tell why a WebSocket handshake failed: with a badge, one more try with a
   * fresh one (an expired or spent badge is refused at the handshake).
   */
  async function openWsRenewing(relay: JsonRpcRelay, onMessage: (params: any) => void) {
    try {
      return await openWs(relay, onMessage);
    } catch (e) {
      if (!badge || (e as RelayError).kind !== "connection") throw e;
      badge.invalidate();
      return openWs(relay, onMessage);
    }
  }

  return {
    sendRelay(relay) {
      const isRest = relay.method === "GET" || (relay.method === "POST" && "url" in relay);
      if (iface === "rest") {
        if (!isRest) return Promise.reject(new RelayError("http", 'rest relays are { method: "GET" | "POST", url }'));
        return rest(relay as RestRelay);
      }
      if (iface === "tendermintrpc" && isRest) return tendermintUri(relay as RestRelay);
      if (isRest) return Promise.reject(new RelayError("http", `a ${iface} client sends { method, params }; use rpcInterface "rest" for REST`));
      return jsonRpc(relay as JsonRpcRelay);
    },

    async sendRelayWs(relay) {
      const { ws, result } = await openWsRenewing(relay, () => {});
      ws.close();
      return result;
    },

    subscribe(relay, onMessage, onError) {
      return subscribeRenewing((onNotification) => openWsRenewing(relay, onNotification), badge, onMessage, onError);
    },
  };
}
