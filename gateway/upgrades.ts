/**
 * Which requests are WebSocket handshakes. Only a real handshake on a WebSocket route (a GET with
 * `Connection: upgrade`, `Upgrade: websocket` and no body, to `/gateway/<chain>/rpc/<KEY>` or to a
 * Tendermint RPC hostname's `/websocket`, `/v1/websocket` on CometBFT 1.x) is relayed as an
 * upgrade, skips the body wait and gets the ws_limit filter; every other request loses its Upgrade
 * header and is a plain request with every check.
 */
import { anon, req, type Cond, type Rule } from "./model.js";

/** The condition "this request is a WebSocket handshake on a WebSocket route" (set by handshakeRules). */
export const WS_HANDSHAKE: Cond = anon("var(txn.ws)", "-m", "bool");

/** RFC 6455 4.1, and no body: a body would reach the node ahead of the frames, unfiltered. */
const HANDSHAKE: Cond = [
  "METH_GET", ...anon("hdr(connection)", "-i", "upgrade"), ...anon("hdr(upgrade)", "-i", "websocket"),
  "!", ...anon("req.hdr_val(content-length)", "gt", "0"), "!", ...anon("req.hdr(transfer-encoding)", "-m", "found"),
];

/**
 * After the path's chain and interface are known (txn.iface), before anything reads the body.
 * `tendermintHost`: the condition "the Host is a Tendermint RPC hostname", if there are any.
 */
export function handshakeRules(tendermintHost?: Cond): Rule[] {
  return [
    req(["set-var(txn.ws)", "bool(true)"], [...HANDSHAKE, "gateway_path", ...anon("var(txn.iface)", "-m", "str", "rpc")], "WebSocket handshakes: only these skip the body wait (gateway paths' rpc route and Tendermint's /websocket)."),
    ...(tendermintHost ? [req(["set-var(txn.ws)", "bool(true)"], [...HANDSHAKE, ...tendermintHost, ...anon("path", "/websocket", "/v1/websocket")])] : []),
    // With no Upgrade header a node sees a plain request: no route but the two above relays a tunnel.
    req(["del-header", "upgrade"], [...anon("hdr(upgrade)", "-m", "found"), "!", ...WS_HANDSHAKE]),
  ];
}
