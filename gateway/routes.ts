/**
 * Routes: which request goes to which backend, per chain and interface, and the gates in front
 * of them (node health, WebSocket upgrade, methods on public hostnames).
 *
 *   POST /gateway/<chain>/rpc-http/<KEY>              JSON-RPC to the chain's rpcHttp upstream (query dropped)
 *   GET  /gateway/<chain>/rpc-http/<KEY>/<uri>        Tendermint URI (cosmos: /status, ...)
 *   GET  /gateway/<chain>/rest/<KEY>/<rest_path>      REST upstream, prefix stripped, query kept
 *   WS   /gateway/<chain>/rpc/<KEY>?secret=...        the chain's WebSocket upstream (query dropped)
 * Cosmos chains may also have their own hostnames (Tendermint RPC + /websocket, REST, gRPC).
 */
import { refuse } from "./errors.js";
import { grpcFilter, wsBackendDirectives, wsFilter } from "./limits.js";
import { RETRY_SAFE, hasNodes } from "./failover.js";
import { GRPC_SENDS, READ_METHODS } from "./methods.js";
import { anon, req, useBackend, type Cond, type Directive, type Rule, type Section } from "./model.js";
import { ChainBackends, backendName, parseUpstream } from "./upstreams.js";
import type { GatewayChain, GatewayOptions, Interface, Route } from "./types.js";
import { WS_HANDSHAKE } from "./upgrades.js";

export interface ChainRoutes {
  readonly backends: Section[];
  /** http-request gates (health, upgrade, methods), in order. */
  readonly gates: Rule[];
  /** use_backend rules for public hostnames, then for gateway paths. */
  readonly hostUses: Rule[];
  readonly uses: Rule[];
  readonly routes: Route[];
}

/** The condition "this request is for <chain>/<iface>". */
export const on = (c: GatewayChain, iface: Interface): string[] =>
  anon("var(txn.chain)", "-m", "str", c.path).concat(anon("var(txn.iface)", "-m", "str", iface));
/** The backend that relays a chain's JSON-RPC POSTs (the response cache fetches through it too). */
export const RPC_BACKEND = "rpc";
export const rpcBackend = (c: GatewayChain) => backendName(c.path, RPC_BACKEND);
export const exactPath: Cond = anon("var(txn.rest)", "-m", "len", "0");
/** The node path of a spec version other than the pinned one, when the request asked for one (specVersions.ts). */
export const SPEC_PATH = "txn.spec_path";
/** The rewrite to a node: its path for the chain's pinned version, or the one the request asked for. */
const toNodePath = (action: "set-path" | "set-uri", base: string): Directive[] => [
  ["http-request", action, base || "/"],
  ["http-request", action, `%[var(${SPEC_PATH})]`, "if", ...anon(`var(${SPEC_PATH})`, "-m", "found")],
];
/**
 * Cosmos: `/gateway/<chain>/rpc/<KEY>/websocket` is the chain's WebSocket too. cosmjs's
 * WebsocketClient appends `/websocket` to the URL it is given, as Tendermint RPC serves it; taken
 * off `txn.rest` right after the path is split, so every rule of the socket applies unchanged.
 */
export const tendermintWsRules = (c: GatewayChain): Rule[] =>
  c.kind === "cosmos" && c.upstreams.rpcWs ? [req(["set-var(txn.rest)", "var(txn.rest),regsub(^/websocket$,)"], [...on(c, "rpc"), ...anon("var(txn.rest)", "-m", "str", "/websocket")])] : [];
/** Set by a chain's gate when its node is out and it has a status URL: the request goes to its down backend. */
export const NODE_DOWN: Cond = anon("var(txn.down)", "-m", "bool");
/** The request's host name without a port: what public hostnames are matched on. */
export const HOST_FETCH = "req.hdr(host),field(1,:)";
export const hostIs = (...names: string[]): string[] => anon(HOST_FETCH, "-i", ...names);

const GET: Cond = anon("method", "GET", "HEAD");
/** Marks a request a read: where a chain has several nodes, a second node may answer it (failover.ts). */
const markRead = (cond: Cond): Rule => req(["set-var(txn.rpc_read)", "bool(true)"], cond);
/** Tendermint URI calls that read: the JSON-RPC reads, called by path. */
const uriReads = (path: string): Cond => anon(path, "-m", "str", ...READ_METHODS.cosmos.map((m) => `/${m}`));

/** Methods each public hostname answers (OPTIONS is the CORS preflight, answered before). */
const HOST_METHODS = { tendermintRpc: ["GET", "HEAD", "POST"], rest: ["GET", "HEAD", "POST"], grpc: ["POST"] } as const;

export function chainRoutes(c: GatewayChain, opts: GatewayOptions): ChainRoutes {
  const be = new ChainBackends(c, opts);
  const gates: Rule[] = [];
  const hostUses: Rule[] = [];
  const uses: Rule[] = [];
  const routes: Route[] = [];
  const refuseDown = (backend: string, cond: Cond) => refuse(503, `${c.chainId} node unavailable or not synced`, [...cond, ...anon(`nbsrv(${backend})`, "eq", "0")]);
  // With a status URL, HTTP requests to a node that is out are answered by its down backend (why, and how far).
  const down = c.statusUrl ? be.addDown(c.statusUrl) : undefined;
  if (down) uses.push(useBackend(down, [...anon("var(txn.chain)", "-m", "str", c.path), ...NODE_DOWN]));
  const gate = (backend: string, cond: Cond) => (down ? req(["set-var(txn.down)", "bool(true)"], [...cond, ...anon(`nbsrv(${backend})`, "eq", "0")]) : refuseDown(backend, cond));
  /**
   * Several nodes of a Cosmos chain: requests matching `cond` are reads of its other interfaces,
   * which a second node may answer, as policy.lua marks JSON-RPC's. With `hop`, HTTP reads (REST
   * GETs, Tendermint URI reads) also take a read hop of their own, as JSON-RPC's do, so a read a
   * node held when it was marked down is sent once more instead of ending without an answer; its
   * use_backend rule goes into `hop.into` before the interface's own.
   */
  const cosmosReads = (cond: Cond, hop?: { what: string; url: string; rewrite: Directive[]; per: "rpcHttp" | "rest"; into: Rule[] }) => {
    if (!hasNodes(c) || c.kind !== "cosmos") return;
    gates.push(markRead(cond));
    if (hop) hop.into.push(useBackend(be.addReads(hop.what, hop.url, hop.rewrite, hop.per).hop, cond));
  };

  if (c.upstreams.rpcHttp) {
    const u = parseUpstream(c.upstreams.rpcHttp);
    // The whole URI: a client's query string is no part of a JSON-RPC call, and never reaches the node.
    const toNode = toNodePath("set-uri", u.basePath);
    // Several nodes: reads pass a hop that sends again one a node's mark-down ended unsent (failover.ts).
    const reads = hasNodes(c) ? be.addReads(RPC_BACKEND, c.upstreams.rpcHttp, toNode) : undefined;
    const post = reads?.hop ?? be.add(RPC_BACKEND, c.upstreams.rpcHttp, toNode, [], "rpcHttp");
    gates.push(gate(reads?.nodes ?? post, [...on(c, "rpc-http"), "METH_POST", ...exactPath]));
    // Several nodes: what is not a read the gateway can vouch for goes where it is never sent twice.
    if (hasNodes(c)) uses.push(useBackend(be.addSends(c.upstreams.rpcHttp, toNode), [...on(c, "rpc-http"), "METH_POST", ...exactPath, "!", ...RETRY_SAFE]));
    uses.push(useBackend(post, [...on(c, "rpc-http"), "METH_POST", ...exactPath]));
    routes.push({ chain: c.path, iface: "rpc-http", backend: post, detail: `POST -> ${c.upstreams.rpcHttp}` });
    if (c.kind === "cosmos") {
      // Tendermint URI methods (GET /status, /block?height=N): prefix stripped, query kept.
      const uriRewrite: Directive[] = [["http-request", "set-path", `${u.basePath}%[var(txn.rest)]`]];
      const uri = be.add("tmuri", c.upstreams.rpcHttp, uriRewrite, [], "rpcHttp");
      gates.push(gate(uri, [...on(c, "rpc-http"), "METH_GET", "!", ...exactPath]));
      cosmosReads([...on(c, "rpc-http"), ...GET, ...uriReads("var(txn.rest)")], { what: "tmuri_read", url: c.upstreams.rpcHttp, rewrite: uriRewrite, per: "rpcHttp", into: uses });
      uses.push(useBackend(uri, [...on(c, "rpc-http"), "METH_GET", "!", ...exactPath]));
      routes.push({ chain: c.path, iface: "rpc-http", backend: uri, detail: `GET /<uri> -> ${c.upstreams.rpcHttp}` });
    }
  }
  if (c.upstreams.rest) {
    const u = parseUpstream(c.upstreams.rest);
    const restRewrite: Directive[] = [
      ["http-request", "set-path", `${u.basePath}%[var(txn.rest)]`, "if", ...anon("var(txn.rest)", "-m", "len", "gt", "0")],
      ["http-request", "set-path", u.basePath || "/", "if", ...exactPath],
    ];
    const rest = be.add("rest", c.upstreams.rest, restRewrite, [], "rest");
    gates.push(gate(rest, on(c, "rest")));
    cosmosReads([...on(c, "rest"), ...GET], { what: "rest_read", url: c.upstreams.rest, rewrite: restRewrite, per: "rest", into: uses });
    uses.push(useBackend(rest, [...on(c, "rest"), ...anon("method", "GET", "POST", "HEAD")]));
    routes.push({ chain: c.path, iface: "rest", backend: rest, detail: `GET|POST /<rest_path> -> ${c.upstreams.rest}` });
  }
  if (c.upstreams.rpcWs) {
    const u = parseUpstream(c.upstreams.rpcWs);
    // The `secret` query parameter is the client library's; it never goes upstream.
    const ws = be.add("ws", c.upstreams.rpcWs, [...toNodePath("set-uri", u.basePath), ...wsBackendDirectives(opts, c.path)], [], "rpcWs");
    // An upgrade cannot become the status GET: a WebSocket to a node that is out gets the plain 503.
    gates.push(refuse(400, "expects a WebSocket upgrade", [...on(c, "rpc"), "!", ...WS_HANDSHAKE]), refuseDown(ws, on(c, "rpc")));
    uses.push(useBackend(ws, [...on(c, "rpc"), ...exactPath]));
    routes.push({ chain: c.path, iface: "rpc", backend: ws, detail: `WebSocket -> ${c.upstreams.rpcWs}` });
  }

  // Cosmos public hostnames, routed by Host (SNI picks the certificate); each answers only the
  // methods its interface uses.
  const hn = c.hostnames ?? {};
  const hostRoute = (role: keyof typeof HOST_METHODS, name: string, url: string, extra: string[], detail: string) => {
    // Tendermint RPC hosts relay /websocket too: its messages count against the address (sc1).
    const filters = role === "tendermintRpc" ? [wsFilter(opts, c.path, 1)] : role === "grpc" ? [grpcFilter(opts)] : [];
    const what = `host_${role === "tendermintRpc" ? "rpc" : role}`;
    const per = role === "tendermintRpc" ? "rpcHttp" : role;
    const backend = be.add(what, url, filters, extra, per);
    gates.push(refuse(405, "method not served on this hostname", [...hostIs(name), "!", ...anon("method", ...HOST_METHODS[role])]));
    // gRPC is HTTP/2 end to end: its reads are retried in its own backend, without a hop.
    if (per === "grpc") cosmosReads([...hostIs(name), "!", ...anon("path", ...GRPC_SENDS)]);
    else cosmosReads([...hostIs(name), ...GET, ...(per === "rest" ? [] : uriReads("path"))], { what: `${what}_read`, url, rewrite: filters, per, into: hostUses });
    hostUses.push(useBackend(backend, hostIs(name)));
    routes.push({ chain: c.path, iface: "hostname", backend, detail });
  };
  if (hn.tendermintRpc && c.upstreams.rpcHttp) hostRoute("tendermintRpc", hn.tendermintRpc, c.upstreams.rpcHttp, [], `https://${hn.tendermintRpc} (+ /websocket) -> ${c.upstreams.rpcHttp}`);
  if (hn.rest && c.upstreams.rest) hostRoute("rest", hn.rest, c.upstreams.rest, [], `https://${hn.rest} -> ${c.upstreams.rest}`);
  // gRPC is HTTP/2 end to end: h2c (or h2 over TLS) to the upstream.
  if (hn.grpc && c.upstreams.grpc) hostRoute("grpc", hn.grpc, c.upstreams.grpc, ["proto", "h2"], `${hn.grpc}:443 (gRPC) -> ${c.upstreams.grpc}`);

  return { backends: be.sections, gates, hostUses, uses, routes };
}
