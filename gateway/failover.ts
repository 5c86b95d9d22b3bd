/**
 * Failover between the nodes of a chain served by several, with HAProxy's own retries: a read
 * whose node fails before answering (refused, reset, closed without a reply, a node marked down
 * while it held the call) is sent once more, to another node; any other call (a batch holding one
 * included) is retried only when the connection failed before the request left the gateway, so it
 * never reaches two nodes. A read is a method on its chain kind's list (methods.ts READ_METHODS),
 * decided in the frontend, where the method policy has read the body: the native path for single
 * calls, policy.lua for batches, both from that list.
 *
 * Everything else (sends, and whatever is not known to be a read) takes a hop through an
 * internal listener (sendHop): HAProxy answers a call whose node closed before replying with no answer at all when the call was not the first on
 * its client connection (src/http_ana.c, abort_keep_alive: HTTP/1.1 keep-alive is closed, an
 * HTTP/2 stream is refused with REFUSED_STREAM), which tells a client it may send the call again
 * elsewhere. Through the hop every send is the first call on a connection of its own, so its
 * client gets a 502 instead and knows the send may have gone out.
 *
 * Reads take a hop of their own (readHopDirectives): a read still connecting to a node when that
 * node is marked down is ended with no answer, and the hop sends it once more.
 *
 * A WebSocket whose node goes away is closed with 1012 (service restart) by failover.lua, so its
 * client reconnects, and lands on a node in rotation. Pure.
 */
import { LUA_ENTRIES, luaLoad } from "./lua.js";
import { anon, req, type Cond, type Directive, type Rule } from "./model.js";
import { WS_HANDSHAKE } from "./upgrades.js";
import { READ_METHODS } from "./methods.js";
import type { GatewayChain, GatewayOptions } from "./types.js";

/** A chain whose backends hold several servers. */
export const hasNodes = (c: GatewayChain): boolean => (c.nodes?.length ?? 0) > 1;

/** Set in the frontend when the request may be sent twice: a read, or a WebSocket handshake. */
export const RETRY_SAFE: Cond = anon("var(txn.rpc_read)", "-m", "bool");

/**
 * How long a connection to a node may take. The nodes sit on the private network and answer a
 * connection in well under a millisecond; one that was killed or cut off never answers it, and
 * the call waits this long before it goes to another node. Short, because a node marked down ends
 * the calls still connecting to it without sending them anywhere (on-marked-down
 * shutdown-sessions): the shorter the wait, the fewer are caught so.
 */
export const NODE_CONNECT_TIMEOUT = "100ms";

/**
 * A route backend's balancing and retry lines, when its chain has several nodes. `sends`: the
 * backend behind the send hop, which retries only a connection that failed (the request never
 * left the gateway); otherwise reads and WebSocket handshakes, retried on any failure.
 */
export function failoverDirectives(sends = false): Directive[] {
  return [
    // Calls differ a lot in cost (eth_getLogs against eth_blockNumber): the least busy node gets the next.
    ["balance", "leastconn"],
    ["retries", "1"],
    // The retry goes to another node than the one that failed.
    ["option", "redispatch", "1"],
    ["retry-on", ...(sends ? ["conn-failure"] : ["conn-failure", "empty-response", "junk-response", "response-timeout", "502", "503", "504"])],
    ["timeout", "connect", NODE_CONNECT_TIMEOUT],
    // Only reads and handshakes are routed here; should anything else come, it is not sent twice.
    ...(sends ? [] : [["http-request", "disable-l7-retry", "if", "!", ...RETRY_SAFE]]),
  ];
}

/** The two kinds of call that pass through an internal listener on their way to the nodes. */
export type HopKind = "send" | "read";

/**
 * The internal listener sends (or reads) pass through (an abstract socket: the gateway's own
 * network namespace only); named by chain and HTTPS port, so gateways side by side on one host
 * (tests, the bench) do not meet.
 */
export const hopSocket = (chain: string, kind: string, o: GatewayOptions) => `abns@rpcstack-${chain}-${kind}-${o.httpsPort}`;

/**
 * The hop backend's lines: a fresh connection to the listener per call, closed after it, and no
 * retry. A node marked down ends the sends it holds with no answer at all (HAProxy 3.2 closes the
 * listener's side too: logged 500 "DC", nothing sent), so an empty answer here may be a send that
 * reached a node: it is never sent again.
 */
export const sendHopDirectives = (socket: string): Directive[] => [
  ["http-reuse", "never"],
  ["option", "http-server-close"],
  ["retries", "0"],
  ["server", "hop", socket],
];

/**
 * The read hop's lines. A node marked down ends the calls it holds (on-marked-down
 * shutdown-sessions); HAProxy cannot always send such a read again itself: one still connecting to
 * the node at that moment is ended with no answer at all, and in the fault run one a paused or cut
 * node held came back as 502. Behind the listener either comes back to the hop empty or as 502,
 * and the hop sends it once more: it then goes to a node in rotation. A read may so reach the
 * nodes more than twice; reads change nothing. Connections to the listener are kept.
 */
export const readHopDirectives = (socket: string): Directive[] => [
  ["retries", "1"],
  ["retry-on", "conn-failure", "empty-response", "502"],
  ["server", "hop", socket],
];

/** The listener's log line: which node took the call (the path, with the key in it, is rewritten before the hop). */
export const hopLogFormat = (kind: HopKind) => `[%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %tsc ${kind}`;

/** The filter that closes a WebSocket with 1012 when its node goes away (multi-node chains). */
export const wsGoneFilter = (): Directive => ["filter", "lua.ws_gone"];

/** The Lua program of ws_gone, loaded when some chain has several nodes. */
export const failoverGlobal = (chains: readonly GatewayChain[], o: GatewayOptions): Directive[] =>
  chains.some(hasNodes) ? [luaLoad(o, LUA_ENTRIES.failover)] : [];

/** Names per ACL: HAProxy splits a configuration line into at most 64 words (MAX_LINE_ARGS). */
const NAMES_PER_RULE = 40;
const chunks = <T>(xs: readonly T[], n: number): T[][] => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, (i + 1) * n));

/**
 * Frontend rules, after the method policy: a single call whose method json_query read and that is
 * on its chain kind's list of reads, and a WebSocket handshake (no body, nothing sent before the
 * 101), are safe to retry. policy.lua marks batches and unusual bodies itself, from the same list.
 */
export function retryRules(chains: readonly GatewayChain[]): Rule[] {
  const multi = chains.filter(hasNodes);
  if (!multi.length) return [];
  return [
    ...multi.flatMap((c, i) =>
      chunks(READ_METHODS[c.kind], NAMES_PER_RULE).map((names, j) =>
        req(
          ["set-var(txn.rpc_read)", "bool(true)"],
          [...anon("var(txn.rpc)", "-m", "str", c.path), ...anon("var(txn.rpc_method)", "-i", "-m", "str", ...names)],
          i || j ? undefined : "Failover: reads may be sent to a second node; anything else never, once it may have reached one.",
        ),
      ),
    ),
    req(["set-var(txn.rpc_read)", "bool(true)"], [...anon("var(txn.chain)", "-m", "str", ...multi.map((c) => c.path)), ...WS_HANDSHAKE]),
  ];
}
