/**
 * Gateway chains, project keys and limits -> an HAProxy configuration (typed model) plus the
 * files it reads (key map, JSON error pages). Pure: no I/O, no Pulumi.
 *
 * Paths served on the gateway domain:
 *   POST /gateway/<chain>/rpc-http/<KEY>              JSON-RPC to the chain's rpcHttp upstream
 *   GET  /gateway/<chain>/rpc-http/<KEY>/<uri>        Tendermint URI (cosmos: /status, ...)
 *   GET  /gateway/<chain>/rest/<KEY>/<rest_path>      REST upstream, prefix stripped, query kept
 *   WS   /gateway/<chain>/rpc/<KEY>?secret=...        the chain's WebSocket upstream (query dropped)
 * Cosmos chains may also have their own hostnames (Tendermint RPC + /websocket, REST, gRPC).
 */
import type { ChainKind, ProjectKey } from "../config/index.js";
import { anon, serialize, type Directive, type HaproxyConfig, type Section } from "./model.js";

export type Interface = "rpc-http" | "rest" | "rpc";

export interface GatewayChain {
  readonly path: string;
  readonly chainId: string;
  readonly kind: ChainKind;
  readonly upstreams: { readonly rpcHttp?: string; readonly rpcWs?: string; readonly rest?: string; readonly grpc?: string };
  /** An HTTP URL that answers 200 only while the node is synced (live gating). */
  readonly healthUrl?: string;
  readonly hostnames?: { readonly tendermintRpc?: string; readonly rest?: string; readonly grpc?: string };
}

export interface GatewayOptions {
  /** Address the public listeners bind (0.0.0.0 in the container, 127.0.0.1 in tests). */
  readonly bindAddress: string;
  readonly httpsPort: number;
  readonly httpPort: number;
  /** Prometheus metrics listener; never published on a public interface. */
  readonly metrics: { readonly address: string; readonly port: number };
  /**
   * PEM with the certificate chain and key, covering the domain and every public hostname. One
   * file, so the ACME client can replace it through the runtime API without a reload.
   */
  readonly certFile: string;
  /** Where the generated files are placed (keys.map, errors/). */
  readonly filesDir: string;
  /** host:port of the ACME HTTP-01 responder behind /.well-known/acme-challenge/. */
  readonly acmeResponder?: string;
  /** DNS resolver for upstream names at run time (Docker's 127.0.0.11:53). */
  readonly resolver?: string;
  /** Runtime API socket, for certificate updates without a reload. */
  readonly adminSocket?: string;
  /** Requests per second one project key may make (averaged over 10 s). */
  readonly rateLimitPerSecond: number;
  readonly maxBodyBytes: number;
  /** How often upstream health is checked. */
  readonly checkIntervalMs: number;
  /** CA bundle for https upstreams. */
  readonly caFile: string;
  /** Worker threads; undefined lets HAProxy use every core. */
  readonly threads?: number;
  /** Concurrent connections (HAProxy needs about two file descriptors each). */
  readonly maxConnections: number;
  /** Started as root (ports 80/443, runtime socket), then run as this user and group. */
  readonly runAs?: string;
}

export interface GatewayBuild {
  readonly config: string;
  /** File name (relative to filesDir) -> contents. keys.map holds project keys: a secret. */
  readonly files: Readonly<Record<string, string>>;
  /** What is served, for outputs and tests: route -> backend. */
  readonly routes: readonly { readonly chain: string; readonly iface: Interface | "hostname"; readonly backend: string; readonly detail: string }[];
}

const ERROR_STATUSES: Record<number, [string, number, string]> = {
  400: ["Bad Request", -32600, "bad request"],
  401: ["Unauthorized", -32001, "invalid or missing project key"],
  403: ["Forbidden", -32003, "forbidden"],
  404: ["Not Found", -32004, "unknown chain or interface"],
  405: ["Method Not Allowed", -32005, "method not allowed on this interface"],
  408: ["Request Timeout", -32008, "request timeout"],
  413: ["Payload Too Large", -32013, "request body too large"],
  429: ["Too Many Requests", -32029, "rate limit exceeded for this project key"],
  500: ["Internal Server Error", -32603, "internal gateway error"],
  502: ["Bad Gateway", -32002, "upstream node returned an invalid response"],
  503: ["Service Unavailable", -32053, "node unavailable or not synced"],
  504: ["Gateway Timeout", -32054, "upstream node timed out"],
};

export const ERROR_STATUS_CODES = Object.keys(ERROR_STATUSES);

export const errorBody = (code: number, message: string) => JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });

const JSON_TYPE = "application/json";

/** `http-request return` of a JSON-RPC style error. */
function jsonReturn(status: number, message: string, cond: string[]): Directive {
  const [, code] = ERROR_STATUSES[status];
  return ["http-request", "return", "status", String(status), "content-type", JSON_TYPE, "string", errorBody(code, message), ...cond];
}

interface Upstream {
  readonly host: string;
  readonly port: number;
  readonly tls: boolean;
  /** Path without a trailing slash ("" for the root). */
  readonly basePath: string;
}

export function parseUpstream(url: string): Upstream {
  const u = new URL(url);
  const tls = u.protocol === "https:" || u.protocol === "wss:";
  const port = u.port ? Number(u.port) : tls ? 443 : 80;
  return { host: u.hostname.replace(/^\[|\]$/g, ""), port, tls, basePath: u.pathname.replace(/\/+$/, "") };
}

/** Health checks say who they are, so node logs and request counts can tell them apart. */
export const CHECK_AGENT = "rpcstack-gateway-healthcheck";

/**
 * How a chain's health is checked: its readiness URL when it has one (200 while synced), else a
 * JSON-RPC head call that must return a result (evm, starknet), else Tendermint's /health.
 */
function healthCheck(c: GatewayChain): { target: Upstream; send: string[]; expect: string[] } {
  if (c.healthUrl) {
    const h = parseUpstream(c.healthUrl);
    return { target: h, send: ["meth", "GET", "uri", h.basePath || "/", "hdr", "User-Agent", CHECK_AGENT], expect: ["status", "200"] };
  }
  if (c.upstreams.rpcHttp && c.kind !== "cosmos") {
    const u = parseUpstream(c.upstreams.rpcHttp);
    const method = c.kind === "evm" ? "eth_blockNumber" : "starknet_blockNumber";
    const body = JSON.stringify({ jsonrpc: "2.0", method, params: [], id: 1 });
    return {
      target: u,
      send: ["meth", "POST", "uri", u.basePath || "/", "hdr", "Content-Type", JSON_TYPE, "hdr", "Host", u.host, "hdr", "User-Agent", CHECK_AGENT, "body", body],
      expect: ["rstring", '"result"'],
    };
  }
  const u = parseUpstream(c.upstreams.rpcHttp ?? c.upstreams.rest ?? c.upstreams.grpc!);
  return { target: u, send: ["meth", "GET", "uri", `${u.basePath}/health`, "hdr", "Host", u.host, "hdr", "User-Agent", CHECK_AGENT], expect: ["status", "200"] };
}

const backendName = (chain: string, what: string) => `be_${chain}_${what}`;

export function buildGateway(chains: readonly GatewayChain[], keys: readonly ProjectKey[], opts: GatewayOptions): GatewayBuild {
  const routes: { chain: string; iface: Interface | "hostname"; backend: string; detail: string }[] = [];
  const backends: Section[] = [];
  // HAProxy runs every http-request rule before any use_backend: keep them apart, in that order.
  const gates: Directive[] = [];
  const uses: Directive[] = [];
  const hostUses: Directive[] = [];
  const rate10s = String(opts.rateLimitPerSecond * 10);
  const checkWords = ["check", "inter", `${opts.checkIntervalMs}`, "fall", "2", "rise", "2"];

  const serverWords = (u: Upstream, extra: string[] = []) => [
    "server", "s1", `${u.host.includes(":") ? `[${u.host}]` : u.host}:${u.port}`,
    ...(u.tls ? ["ssl", "verify", "required", "ca-file", opts.caFile, "sni", `str(${u.host})`] : []),
    ...extra,
  ];

  for (const c of chains) {
    // Health: one check per chain; every route backend of the chain follows it.
    const hc = backendName(c.path, "health");
    const check = healthCheck(c);
    backends.push({
      header: ["backend", hc],
      comment: `${c.chainId}: health of the node behind /gateway/${c.path}`,
      directives: [["option", "httpchk"], ["http-check", "send", ...check.send], ["http-check", "expect", ...check.expect], serverWords(check.target, checkWords)],
    });
    const track = ["track", `${hc}/s1`];

    const routeBackend = (what: string, url: string, rewrite: Directive[], extra: string[] = []): string => {
      const u = parseUpstream(url);
      const name = backendName(c.path, what);
      backends.push({
        header: ["backend", name],
        directives: [...rewrite, ["http-request", "set-header", "Host", u.port === (u.tls ? 443 : 80) ? u.host : `${u.host}:${u.port}`], serverWords(u, [...track, ...extra])],
      });
      return name;
    };

    const on = (iface: Interface) => anon("var(txn.chain)", "-m", "str", c.path) .concat(anon("var(txn.iface)", "-m", "str", iface));
    const gate = (be: string, cond: string[]) => jsonReturn(503, `${c.chainId} node unavailable or not synced`, ["if", ...cond, ...anon(`nbsrv(${be})`, "eq", "0")]);

    if (c.upstreams.rpcHttp) {
      const u = parseUpstream(c.upstreams.rpcHttp);
      const post = routeBackend("rpc", c.upstreams.rpcHttp, [["http-request", "set-path", u.basePath || "/"]]);
      const exact = anon("var(txn.rest)", "-m", "len", "0");
      gates.push(gate(post, [...on("rpc-http"), "METH_POST", ...exact]));
      uses.push(["use_backend", post, "if", ...on("rpc-http"), "METH_POST", ...exact]);
      routes.push({ chain: c.path, iface: "rpc-http", backend: post, detail: `POST -> ${c.upstreams.rpcHttp}` });
      if (c.kind === "cosmos") {
        // Tendermint URI methods (GET /status, /block?height=N): prefix stripped, query kept.
        const uri = routeBackend("tmuri", c.upstreams.rpcHttp, [["http-request", "set-path", `${u.basePath}%[var(txn.rest)]`]]);
        gates.push(gate(uri, [...on("rpc-http"), "METH_GET", "!", ...exact]));
        uses.push(["use_backend", uri, "if", ...on("rpc-http"), "METH_GET", "!", ...exact]);
        routes.push({ chain: c.path, iface: "rpc-http", backend: uri, detail: `GET /<uri> -> ${c.upstreams.rpcHttp}` });
      }
    }
    if (c.upstreams.rest) {
      const u = parseUpstream(c.upstreams.rest);
      const rest = routeBackend("rest", c.upstreams.rest, [["http-request", "set-path", `${u.basePath}%[var(txn.rest)]`, "if", ...anon("var(txn.rest)", "-m", "len", "gt", "0")], ["http-request", "set-path", u.basePath || "/", "if", ...anon("var(txn.rest)", "-m", "len", "0")]]);
      gates.push(gate(rest, on("rest")));
      uses.push(["use_backend", rest, "if", ...on("rest"), ...anon("method", "GET", "POST", "HEAD")]);
      routes.push({ chain: c.path, iface: "rest", backend: rest, detail: `GET|POST /<rest_path> -> ${c.upstreams.rest}` });
    }
    if (c.upstreams.rpcWs) {
      const u = parseUpstream(c.upstreams.rpcWs);
      // The `secret` query parameter is the client library's; it never goes upstream.
      const ws = routeBackend("ws", c.upstreams.rpcWs, [["http-request", "set-uri", u.basePath || "/"]]);
      gates.push(jsonReturn(400, "expects a WebSocket upgrade", ["if", ...on("rpc"), "!", ...anon("hdr(upgrade)", "-i", "websocket")]), gate(ws, on("rpc")));
      uses.push(["use_backend", ws, "if", ...on("rpc"), ...anon("var(txn.rest)", "-m", "len", "0")]);
      routes.push({ chain: c.path, iface: "rpc", backend: ws, detail: `WebSocket -> ${c.upstreams.rpcWs}` });
    }

    // Cosmos public hostnames, routed by Host (SNI picks the certificate).
    const hn = c.hostnames ?? {};
    const host = (name: string) => anon("req.hdr(host),field(1,:)", "-i", name);
    if (hn.tendermintRpc && c.upstreams.rpcHttp) {
      const be = routeBackend("host_rpc", c.upstreams.rpcHttp, []);
      hostUses.push(["use_backend", be, "if", ...host(hn.tendermintRpc)]);
      routes.push({ chain: c.path, iface: "hostname", backend: be, detail: `https://${hn.tendermintRpc} (+ /websocket) -> ${c.upstreams.rpcHttp}` });
    }
    if (hn.rest && c.upstreams.rest) {
      const be = routeBackend("host_rest", c.upstreams.rest, []);
      hostUses.push(["use_backend", be, "if", ...host(hn.rest)]);
      routes.push({ chain: c.path, iface: "hostname", backend: be, detail: `https://${hn.rest} -> ${c.upstreams.rest}` });
    }
    if (hn.grpc && c.upstreams.grpc) {
      // gRPC is HTTP/2 end to end: h2c (or h2 over TLS) to the upstream.
      const be = routeBackend("host_grpc", c.upstreams.grpc, [], ["proto", "h2"]);
      hostUses.push(["use_backend", be, "if", ...host(hn.grpc)]);
      routes.push({ chain: c.path, iface: "hostname", backend: be, detail: `${hn.grpc}:443 (gRPC) -> ${c.upstreams.grpc}` });
    }
  }

  const hostnames = chains.flatMap((c) => Object.values(c.hostnames ?? {}));
  const files: Record<string, string> = {
    "keys.map": keys.map((k) => `${k.key} ${k.name}\n`).join(""),
  };
  for (const [status, [reason, code, message]] of Object.entries(ERROR_STATUSES)) {
    const body = errorBody(code, message);
    files[`errors/${status}.http`] =
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n${body}`;
  }
  const f = (name: string) => `${opts.filesDir}/${name}`;

  const global: Section = {
    header: ["global"],
    directives: [
      ["log", "stdout", "format", "raw", "local0", "info"],
      ["maxconn", String(opts.maxConnections)],
      ...(opts.runAs ? [["user", opts.runAs], ["group", opts.runAs]] : []),
      ...(opts.threads ? [["nbthread", String(opts.threads)]] : []),
      ...(opts.adminSocket ? [["stats", "socket", opts.adminSocket, "mode", "600", "level", "admin"]] : []),
      // Mozilla "intermediate" TLS: TLS 1.2+ with forward-secret AEAD ciphers.
      ["ssl-default-bind-options", "ssl-min-ver", "TLSv1.2"],
      ["ssl-default-bind-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"],
      ["ssl-default-bind-ciphersuites", "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"],
      ["tune.ssl.default-dh-param", "2048"],
    ],
  };
  const defaults: Section = {
    header: ["defaults"],
    directives: [
      ["mode", "http"],
      ["log", "global"],
      ["option", "dontlognull"],
      ["timeout", "connect", "5s"],
      ["timeout", "client", "60s"],
      ["timeout", "server", "60s"],
      ["timeout", "http-request", "10s"],
      ["timeout", "http-keep-alive", "15s"],
      ["timeout", "queue", "10s"],
      ["timeout", "client-fin", "10s"],
      // WebSocket subscriptions stay open; idle ones close after an hour.
      ["timeout", "tunnel", "1h"],
      ["errorfiles", "json-errors"],
      ["default-server", ...(opts.resolver ? ["resolvers", "docker"] : []), "init-addr", "last,libc,none"],
    ],
  };
  const httpErrors: Section = {
    header: ["http-errors", "json-errors"],
    directives: Object.keys(ERROR_STATUSES).map((s) => ["errorfile", s, f(`errors/${s}.http`)]),
  };
  const resolvers: Section[] = opts.resolver
    ? [{ header: ["resolvers", "docker"], directives: [["nameserver", "dns", opts.resolver], ["hold", "valid", "10s"], ["resolve_retries", "3"]] }]
    : [];

  // Access log: the key's name, never the key (no %r, %HU or %HP, which carry the path).
  const logFormat = "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %tsc key=%[var(txn.keyname)] chain=%[var(txn.chain)] iface=%[var(txn.iface)] %HM";
  const https: Section = {
    header: ["frontend", "https"],
    comment: "Public TLS listener: gateway paths and Cosmos hostnames.",
    directives: [
      ["bind", `${opts.bindAddress}:${opts.httpsPort}`, "ssl", "crt", opts.certFile, "alpn", "h2,http/1.1"],
      ["log-format", logFormat],
      ["http-request", "set-var(txn.chain)", "path,field(3,/)", "if", ...anon("path_beg", "/gateway/")],
      ["http-request", "set-var(txn.iface)", "path,field(4,/)", "if", ...anon("path_beg", "/gateway/")],
      ["http-request", "set-var(txn.key)", "path,field(5,/)", "if", ...anon("path_beg", "/gateway/")],
      ["http-request", "set-var(txn.rest)", "path,regsub(^/gateway/[^/]*/[^/]*/[^/]*/?,/),regsub(^/$,)", "if", ...anon("path_beg", "/gateway/")],
      ["http-request", "set-var(txn.keyname)", "var(txn.key),map(" + f("keys.map") + ")", "if", ...anon("var(txn.key)", "-m", "found")],
      { comment: "Cosmos public hostnames (no /gateway path); per-address rate limit." },
      ["acl", "public_host", ...(hostnames.length ? ["req.hdr(host),field(1,:)", "-i", ...hostnames] : ["always_false"])],
      ["http-request", "track-sc1", "src", "table", "st_addresses", "if", "public_host"],
      jsonReturn(429, "rate limit exceeded for this address", ["if", "public_host", ...anon("sc_http_req_rate(1)", "gt", rate10s)]),
      { comment: "Gateway paths: chain and interface, then key, then limits, then the node's health." },
      ["acl", "known_chain", "var(txn.chain)", "-m", "str", ...(chains.length ? chains.map((c) => c.path) : ["-"])],
      ["acl", "known_iface", "var(txn.iface)", "-m", "str", "rpc-http", "rest", "rpc"],
      jsonReturn(404, "unknown chain or interface", ["if", "!public_host", "!known_chain", "or", "!public_host", "!known_iface"]),
      jsonReturn(401, "invalid or missing project key", ["if", "!public_host", "!", ...anon("var(txn.keyname)", "-m", "found")]),
      ["http-request", "track-sc0", "var(txn.keyname)", "table", "st_keys", "if", "!public_host"],
      jsonReturn(429, "rate limit exceeded for this project key", ["if", "!public_host", ...anon("sc_http_req_rate(0)", "gt", rate10s)]),
      jsonReturn(413, "request body too large", ["if", ...anon("req.hdr_val(content-length)", "gt", String(opts.maxBodyBytes))]),
      ...gates,
      ...hostUses,
      ...uses,
      // Anything no route took: http-request rules run before use_backend, so this is a backend.
      ["default_backend", "be_unrouted"],
    ],
  };
  const unrouted: Section = {
    header: ["backend", "be_unrouted"],
    directives: [jsonReturn(405, "method or path not served on this interface", [])],
  };
  const http: Section = {
    header: ["frontend", "http"],
    comment: "Port 80: ACME HTTP-01 challenges, everything else redirected to HTTPS.",
    directives: [
      ["bind", `${opts.bindAddress}:${opts.httpPort}`],
      // A plain-HTTP request can carry a key in its path too: the URI is never logged.
      ["log-format", "%ci:%cp [%tr] %ft %b/%s %Ta %ST %B %HM"],
      ["http-request", "redirect", "scheme", "https", "code", "301", "unless", ...anon("path_beg", "/.well-known/acme-challenge/")],
      ...(opts.acmeResponder ? [["use_backend", "be_acme", "if", ...anon("path_beg", "/.well-known/acme-challenge/")]] : []),
    ],
  };
  const acme: Section[] = opts.acmeResponder
    ? [{ header: ["backend", "be_acme"], directives: [["server", "acme", opts.acmeResponder]] }]
    : [];
  const metrics: Section = {
    header: ["frontend", "metrics"],
    comment: "Prometheus metrics, on the private network only.",
    directives: [
      ["bind", `${opts.metrics.address}:${opts.metrics.port}`],
      ["no", "log"],
      ["http-request", "use-service", "prometheus-exporter", "if", ...anon("path", "/metrics")],
      jsonReturn(404, "only /metrics is served here", []),
    ],
  };
  const tables: Section[] = [
    { header: ["backend", "st_keys"], directives: [["stick-table", "type", "string", "len", "64", "size", "100k", "expire", "30s", "store", "http_req_rate(10s)"]] },
    { header: ["backend", "st_addresses"], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "30s", "store", "http_req_rate(10s)"]] },
  ];

  const cfg: HaproxyConfig = {
    sections: [global, defaults, httpErrors, ...resolvers, https, http, metrics, ...backends, unrouted, ...acme, ...tables],
  };
  return { config: serialize(cfg), files, routes };
}
