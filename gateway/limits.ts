/**
 * Limits that hold whatever the client does: connections per address, wrong keys per address,
 * body size whatever the framing, slow bodies, calls (not requests) per key, WebSocket
 * connections per key. Each function returns rules in the order they must run.
 */
import { refuse } from "./errors.js";
import { anon, req, type Cond, type Directive, type Rule, type Section } from "./model.js";
import type { GatewayOptions } from "./types.js";
import { QUOTA_SC, quotaTable } from "./quotas.js";
import { USAGE_SC, usageTable } from "./usage.js";
import { KEY_RATE_TABLE } from "./usageContract.js";

/** Request buffers hold a whole body (the policy reads it) plus headers; see bufferSize(). */
const HEADER_ROOM = 64 * 1024;
const MAX_REWRITE = 8192;
/** How long a client may take to send a body once its headers are in. */
export const BODY_TIMEOUT = "10s";

export const bufferSize = (maxBodyBytes: number) => Math.max(16384, maxBodyBytes + HEADER_ROOM);
/** What the WebSocket filter (limits.lua) reads of the buffers: their size and HAProxy's reserve in them. */
export const bufferData = (o: GatewayOptions) => ({ size: bufferSize(o.maxBodyBytes), reserve: MAX_REWRITE });

/** What all of HAProxy's buffers together may take: requests wait for a buffer beyond it. */
export const BUFFER_MEMORY = 1024 * 1024 * 1024;
/**
 * HAProxy's memory in MiB: the response cache lives in its memory, so it asks for the cache's budget
 * plus its own; under load the buffers it may allocate (BUFFER_MEMORY) come on top.
 */
export function gatewayMemoryMiB(o: Pick<GatewayOptions, "cache">): { request: number; limit: number } {
  const request = Math.ceil((o.cache?.maxBytes ?? 0) / 2 ** 20) + 256;
  return { request, limit: request + Math.ceil(BUFFER_MEMORY / 2 ** 20) + 256 };
}
/** At most BUFFER_MEMORY in buffers (two per busy connection), never fewer than 256 buffers. */
export const bufferLimit = (o: GatewayOptions) => Math.min(2 * o.maxConnections + 2, Math.max(256, Math.floor(BUFFER_MEMORY / bufferSize(o.maxBodyBytes))));
/** Buffers each thread keeps for reuse (tune.memory.hot-size). */
const HOT_BUFFERS = 16;

/**
 * Buffers hold a whole body, so they are large (1 MiB + 64 KiB by default). HAProxy's per-thread
 * cache keeps 512 KiB, so without more room each buffer goes back to malloc, which gives large
 * blocks back to the kernel and faults them in again: measured, the larger part of the
 * hardening's cost per request. tune.memory.hot-size (2.8+) keeps them in the cache; on older
 * releases HAPROXY_ENVIRONMENT keeps glibc from returning them.
 */
export const tuneDirectives = (o: GatewayOptions): Directive[] => [
  // sc0 the key, sc1 the key's sockets (or the address on public hostnames), sc2 the address's
  // connections, sc3 its requests whose body is still on its way (slowBodyRules), sc4 a key's usage
  // (usage.ts), sc5 its quota's period (quotas.ts), sc6 the WebSockets an address opens (wsOpenRules).
  ["tune.stick-counters", "7"],
  ["tune.h2.fe.max-concurrent-streams", String(H2_STREAMS_PER_CONNECTION)],
  ["tune.bufsize", String(bufferSize(o.maxBodyBytes))],
  ["tune.maxrewrite", String(MAX_REWRITE)],
  ["tune.buffers.limit", String(bufferLimit(o))],
  ["tune.memory.hot-size", String(HOT_BUFFERS * bufferSize(o.maxBodyBytes))],
];

/**
 * The HAProxy process's environment: glibc serves buffers from its heap (mmap_threshold above
 * any buffer) and keeps freed ones (trim_threshold above what buffers may take), instead of
 * mapping and unmapping a megabyte per request. Official haproxy images are Debian (glibc).
 */
export const HAPROXY_ENVIRONMENT: Readonly<Record<string, string>> = {
  GLIBC_TUNABLES: `glibc.malloc.mmap_threshold=${32 * 1024 * 1024}:glibc.malloc.trim_threshold=${2 * BUFFER_MEMORY}`,
};

/**
 * Headers are bounded apart from bodies: the buffers that hold a whole body would otherwise let
 * about a megabyte of headers through to a node. 16 KiB is what HAProxy's default buffers allowed.
 */
export const MAX_HEADER_BYTES = 16 * 1024;
export const headerRules = (): Rule[] => [refuse(431, "request headers too large", anon("req.hdrs,length", "gt", String(MAX_HEADER_BYTES)))];

/**
 * Who "an address" is in every per-address limit: an IPv4 address, or the /64 an IPv6 address is
 * in. A subscriber is given a whole /64 (often more), so counting each IPv6 address would let one
 * client spread over 2^64 of them. HAProxy reads an IPv4-mapped (::ffff:a.b.c.d) address as IPv4.
 */
export const CLIENT_ADDRESS = "src,ipmask(32,64)";
/** The same, for the Lua filters (limits.lua: unfinished messages per address), set on WebSocket handshakes. */
const CLIENT_VAR = "txn.client";

/** Where wsOpenRules counts an address's WebSocket opens; connectionRules reads it before TLS. */
const WS_OPENS_TABLE = "st_ws_opens";

/** Per-address connection cap, before TLS (sc2 is the client address for the whole connection). */
export const connectionRules = (o: GatewayOptions): Rule[] => [
  { phase: "tcp-request connection", action: ["track-sc2", CLIENT_ADDRESS, "table", "st_sources"], why: "Per-address connections and wrong keys (sc2)." },
  { phase: "tcp-request connection", action: ["reject"], cond: anon("sc_conn_cur(2)", "gt", String(o.maxConnectionsPerAddress)) },
  // An address that goes on opening WebSockets past its 429s (wsOpenRules) is refused before TLS
  // for the rest of the window: each refusal over TLS costs a handshake and buffers.
  {
    phase: "tcp-request connection", action: ["reject"], cond: anon(`${CLIENT_ADDRESS},table_http_req_rate(${WS_OPENS_TABLE})`, "gt", String(2 * WS_OPENS_PER_ADDRESS)),
    why: "WebSocket opens per address (sc6, wsOpenRules): twice the bound, and its connections are refused before TLS.",
  },
];

/**
 * HTTP/2 streams one connection may have open (HAProxy's default is 100): clients queue past it.
 * HAProxy 3.2 grants every open stream a receive buffer of its own before any rule has looked at
 * it, so this (plus the connection's own two) times the connections an address may open is what
 * one address can take from the pool in one burst: 64 x 10 = 640 of the 963 buffers at the
 * defaults. With 32, and with 16, 12 connections from one address took a 202-buffer pool and
 * HAProxy stopped serving everyone (docs/gateway.md, "What one address can hold").
 */
export const H2_STREAMS_PER_CONNECTION = 8;

/**
 * Requests in progress per address, whatever the framing: HTTP/1.1 allows one per connection, so
 * HTTP/2 streams get the same bound as connections (maxConnectionsPerAddress). A request waiting
 * for its body holds a buffer (bufferSize) for up to BODY_TIMEOUT: without this bound, slow
 * streams from one address took every buffer and stalled everyone. A request is tracked until it
 * ends: on gateway paths by sc1 (free there but for WebSocket handshakes, which hold no buffer
 * while idle and are bounded per key), on public hostnames by sc0 (no key there).
 */
export function inProgressRules(o: GatewayOptions, gateway: Cond, publicHost: Cond): Rule[] {
  const over = (sc: 0 | 1) => anon(`sc_conn_cur(${sc})`, "gt", String(o.maxConnectionsPerAddress));
  return [
    req(["track-sc1", CLIENT_ADDRESS, "table", "st_requests"], gateway, "Requests in progress per address (HTTP/2 streams count one each)."),
    req(["track-sc0", CLIENT_ADDRESS, "table", "st_requests"], publicHost),
    refuse(429, "too many requests in progress from this address", [...gateway, ...over(1), "or", ...publicHost, ...over(0)]),
  ];
}

/** Key guessing: an address past its wrong-key budget gets 429 before the key map is read. */
export function guessRules(o: GatewayOptions, gateway: Cond): Rule[] {
  if (o.wrongKeysPerMinute <= 0) return [];
  return [refuse(429, "too many requests with a wrong key from this address", [...gateway, ...anon("sc_gpc0_rate(2)", "gt", String(o.wrongKeysPerMinute))])];
}
export const countWrongKey = (gateway: Cond, noKey: Cond): Rule[] => [req(["sc-inc-gpc0(2)"], [...gateway, ...noKey])];

/**
 * What one address may hold of the buffer pool while its clients are slow: requests whose body is
 * still on its way (here), and WebSockets holding part of a message (ws_limit, limits.lua). Each
 * holds a whole buffer until it is complete. The per-address bound on requests in progress keeps
 * one address's share small; this keeps many addresses' shares small together: 64 addresses hold
 * at most 64 x 2 x 4 = 512 of the pool's 963 buffers at the defaults (docs/gateway.md).
 */
export const SLOW_BODIES_PER_ADDRESS = 4;
export const UNFINISHED_MESSAGES_PER_ADDRESS = 4;

/**
 * A request whose body is not all in when its headers are: fewer bytes than its Content-Length, a
 * chunked HTTP/1.1 body, or an HTTP/2 body without Content-Length none of which came with its
 * headers. HAProxy has no fetch that tells whether a body without Content-Length is complete, so
 * one whose first bytes came with the headers (what HTTP/2 clients that omit the length send) is
 * not counted: it stays under the bound on requests in progress. A GET or HEAD without either
 * has none. Tracked by address in sc3 for as long as it lasts.
 */
function slowBodyRules(bodied: Cond): Rule[] {
  const hasLength = anon("req.hdr_cnt(content-length)", "gt", "0");
  const noLength = anon("req.hdr_cnt(content-length)", "eq", "0");
  const slow = (cond: Cond, why?: string) => req(["set-var(txn.slow)", "bool(true)"], [...bodied, ...cond], why);
  return [
    req(["set-var(txn.cl)", "req.hdr_val(content-length)"], [...bodied, ...hasLength]),
    // One rule per case: a line of HAProxy's holds at most 64 words.
    slow([...hasLength, ...anon("req.body_len,sub(txn.cl)", "lt", "0")], "Slow bodies: an address holds few buffers waiting for a body, however many addresses come."),
    slow([...noLength, ...anon("req.body_len", "eq", "0"), "!", "METH_GET", "!", "METH_HEAD"]),
    slow([...noLength, ...anon("req.hdr_cnt(transfer-encoding)", "gt", "0")]),
    req(["track-sc3", CLIENT_ADDRESS, "table", "st_slow"], anon("var(txn.slow)", "-m", "bool")),
    refuse(429, "too many request bodies on their way from this address", [...anon("sc_conn_cur(3)", "gt", String(SLOW_BODIES_PER_ADDRESS))]),
  ];
}

/** Bodies: Content-Length first (no waiting), then the body itself, chunked or HTTP/2 alike. */
export function bodyRules(o: GatewayOptions, bodied: Cond): Rule[] {
  const max = String(o.maxBodyBytes);
  // Once the buffer is full the message did not fit: refuse it, whatever its framing says.
  const full = String(bufferSize(o.maxBodyBytes) - MAX_REWRITE - 4096);
  return [
    refuse(413, "request body too large", anon("req.hdr_val(content-length)", "gt", max)),
    ...slowBodyRules(bodied),
    req(["wait-for-body", "time", BODY_TIMEOUT], bodied, `Waits for the whole body (408 after ${BODY_TIMEOUT}): nothing reaches a node before it is in and checked.`),
    refuse(413, "request body too large", anon("req.body_size", "gt", max)),
    req(["set-var(txn.hdrlen)", "req.hdrs,length"], anon("req.body_len", "gt", "0")),
    refuse(413, "request body too large", anon("req.body_len,add(txn.hdrlen)", "ge", full)),
  ];
}

/** The window of every rate here (the stick tables' http_req_rate and gpc_rate), and the calls it allows. */
const RATE_WINDOW_S = 10;
export const callsPerWindowAt = (perSecond: number) => String(perSecond * RATE_WINDOW_S);
const callsPerWindow = (o: GatewayOptions) => callsPerWindowAt(o.rateLimitPerSecond);
/** A rate of the key's own, in calls per window (set from badge_rates.map by badgeAuthRules); absent: callsPerWindow. */
export const OWN_RATE_VAR = "txn.rate_max";
/** `<name> <calls>`: what the other gateway replicas counted for each key name in their rate windows (kept by the usage keeper; with sharedRates). */
export const RATE_OTHERS_FILE = "rate_others.map";
const RATE_OTHERS_VAR = "txn.rate_others";

/** The badge projects with a rate of their own, and their calls per second. */
export const ownRates = (o: GatewayOptions): [string, number][] => Object.entries(o.badges?.ratePerSecond ?? {});

/**
 * Rates counted in calls, per key on gateway paths (sc0 tracks the key) and per address on
 * public hostnames (sc1): each request counts once in http_req_rate, and the policy's Lua
 * action adds a batch's further calls to gpc 0 of the same counter.
 */
export function callRate(o: GatewayOptions, sc: 0 | 1, who: Cond, message: string): Rule[] {
  // A key's calls on the other replicas count too, where they share rates (public hostnames count per address).
  const shared = sc === 0 && o.sharedRates;
  const calls = `sc_http_req_rate(${sc}),add(txn.batch_extra_rate)${shared ? `,add(${RATE_OTHERS_VAR})` : ""}`;
  const over = anon(calls, "gt", callsPerWindow(o));
  // Keys with a rate of their own (badge projects) only where some have one: one more test per request.
  const keyRates = sc === 0 && ownRates(o).length > 0;
  const own = anon(`var(${OWN_RATE_VAR})`, "-m", "found");
  return [
    req(["set-var(txn.batch_extra_rate)", `sc_gpc_rate(0,${sc})`], who),
    ...(shared ? [req([`set-var(${RATE_OTHERS_VAR})`, `var(txn.keyname),map_str_int(${o.filesDir}/${RATE_OTHERS_FILE},0)`], who)] : []),
    refuse(429, message, keyRates ? [...who, "!", ...own, ...over, "or", ...who, ...own, ...anon(`${calls},sub(${OWN_RATE_VAR})`, "gt", "0")] : [...who, ...over]),
  ];
}
export const ADDRESS_RATE = "rate limit exceeded for this address";

/** After the policy, so a batch's own calls count: per key, and per address on public hostnames. */
export const rateRules = (o: GatewayOptions, keyed: Cond): Rule[] => [
  ...callRate(o, 0, keyed, "rate limit exceeded for this project key"),
  ...callRate(o, 1, ["public_host"], ADDRESS_RATE),
];

/**
 * WebSockets opened per address (sc6): each one reaches a node as a new upgrade, so a client
 * reconnecting in a loop, or many addresses reopening what the gateway closes, would keep a node
 * busy accepting sockets (in the 64-address test a JavaScript node took over 1,000 a second and
 * missed its health checks): 3 a second on average over RATE_WINDOW_S, 30 in all. And at most 8 in
 * any second: each new socket's first bytes take a whole buffer before any Lua has seen them, and
 * HAProxy serves a thread's buffer waiters in turn, so 64 addresses opening 24 sockets at once
 * queued another address's relayed answer for 2.5 to 9.5 s behind them (docs/gateway.md, "What
 * many addresses can hold"). Counted before the key is looked at, on gateway paths and public
 * hostnames alike, refused opens included.
 */
export const WS_OPENS_PER_ADDRESS = 30;
export const WS_OPENS_PER_SECOND = 8;
export const wsOpenRules = (ws: Cond): Rule[] => [
  req(["track-sc6", CLIENT_ADDRESS, "table", WS_OPENS_TABLE], ws),
  req([`set-var(${CLIENT_VAR})`, CLIENT_ADDRESS], ws),
  req(["sc-inc-gpc(0,6)"], ws),
  refuse(429, "too many WebSockets opened from this address: wait before opening another", [...ws, ...anon("sc_http_req_rate(6)", "gt", String(WS_OPENS_PER_ADDRESS)), "or", ...ws, ...anon("sc_gpc_rate(0,6)", "gt", String(WS_OPENS_PER_SECOND))]),
];

/**
 * WebSocket connections per key (sc1 tracks the key for the life of the tunnel): per project key,
 * and per badge, not per project, on sockets opened with a badge (txn.ws_owner, set by the badge
 * rules), since a front end's many pages each hold their own. No compression extension is
 * negotiated, so the sizes the ws_limit filter reads are the sizes a node decodes.
 */
export function wsRules(o: GatewayOptions, ws: Cond): Rule[] {
  return [
    req(["set-var(txn.ws_owner)", "var(txn.keyname)"], [...ws, "!", ...anon("var(txn.ws_owner)", "-m", "found")]),
    req(["track-sc1", "var(txn.ws_owner)", "table", "st_ws"], ws),
    refuse(429, "too many WebSocket connections for this project key", [...ws, ...anon("sc_conn_cur(1)", "gt", String(o.wsMaxConnectionsPerKey))]),
    req(["del-header", "Sec-WebSocket-Extensions"], anon("hdr(upgrade)", "-m", "found")),
  ];
}

/**
 * Messages inside a relayed WebSocket (ws_limit in gateway/lua/limits.lua): up to maxBodyBytes,
 * read with the chain's method policy, each call counted against the rate of the stick counter
 * `sc` (0: the key; 1: the address on public hostnames), subscriptions capped per socket and per
 * key (per address on public hostnames).
 */
export const wsFilter = (o: GatewayOptions, chain: string, sc: 0 | 1): Directive => [
  "filter", "lua.ws_limit", chain, String(o.maxBodyBytes), callsPerWindow(o), String(sc), String(o.wsMaxSubscriptionsPerSocket), String(o.wsMaxSubscriptionsPerKey),
  String(UNFINISHED_MESSAGES_PER_ADDRESS), String(parseInt(BODY_TIMEOUT, 10)),
  // A key's usage and quota are counted where a key is tracked (sc0); public hostnames have none.
  sc === 0 ? String(USAGE_SC) : "-",
  sc === 0 ? String(QUOTA_SC) : "-",
];

/*
 * With a data filter in the tunnel, HAProxy no longer switches to `timeout tunnel` (src/stream.c
 * applies it only once a channel has no analyser left): the client and server timeouts measure
 * idleness instead (traffic either way keeps a socket open, checked on 2.6.12). So a WebSocket
 * backend's server timeout is the idle timeout, and the client timeout is never shorter.
 */
export const wsBackendDirectives = (o: GatewayOptions, chain: string): Directive[] => [wsFilter(o, chain, 0), ["timeout", "server", `${o.wsIdleTimeoutSeconds}s`]];
export const clientTimeout = (o: GatewayOptions) => `${Math.max(60, o.wsIdleTimeoutSeconds)}s`;

/**
 * gRPC request streams (grpc_limit in gateway/lua/grpc_limit.lua), which are relayed, not waited for:
 * up to maxBodyBytes a stream, each message counted against the address's rate (sc1).
 */
export const grpcFilter = (o: GatewayOptions): Directive => ["filter", "lua.grpc_limit", String(o.maxBodyBytes), callsPerWindow(o), "1"];

export const tables = (): Section[] => [
  usageTable(),
  quotaTable(),
  { header: ["backend", KEY_RATE_TABLE], directives: [["stick-table", "type", "string", "len", "72", "size", "100k", "expire", "30s", "store", `http_req_rate(${RATE_WINDOW_S}s),gpc_rate(1,${RATE_WINDOW_S}s)`]] },
  { header: ["backend", "st_ws"], directives: [["stick-table", "type", "string", "len", "64", "size", "100k", "expire", "1h", "store", "conn_cur"]] },
  { header: ["backend", "st_addresses"], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "30s", "store", `http_req_rate(${RATE_WINDOW_S}s),gpc_rate(1,${RATE_WINDOW_S}s)`]] },
  { header: ["backend", "st_sources"], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "60s", "store", "conn_cur,gpc0_rate(60s)"]] },
  { header: ["backend", "st_requests"], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "60s", "store", "conn_cur"]] },
  { header: ["backend", "st_slow"], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "60s", "store", "conn_cur"]] },
  { header: ["backend", WS_OPENS_TABLE], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "30s", "store", `http_req_rate(${RATE_WINDOW_S}s),gpc_rate(1,1s)`]] },
];
