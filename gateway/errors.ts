/**
 * The gateway's own answers: every status HAProxy can send by itself gets a JSON-RPC style body
 * (errorfiles), and rules that refuse a request return the same shape.
 */
import type { Cond, Directive, Rule } from "./model.js";

/** status -> [reason, JSON-RPC style code, message]. Every status HAProxy lets errorfile replace. */
const ERROR_STATUSES: Record<number, [string, number, string]> = {
  400: ["Bad Request", -32600, "bad request"],
  401: ["Unauthorized", -32001, "invalid or missing project key"],
  403: ["Forbidden", -32003, "forbidden"],
  404: ["Not Found", -32004, "unknown chain or interface"],
  405: ["Method Not Allowed", -32005, "method not allowed on this interface"],
  407: ["Proxy Authentication Required", -32007, "proxy authentication required"],
  408: ["Request Timeout", -32008, "request timeout"],
  410: ["Gone", -32010, "gone"],
  413: ["Payload Too Large", -32013, "request body too large"],
  414: ["URI Too Long", -32014, "URI too long"],
  421: ["Misdirected Request", -32021, "misdirected request"],
  422: ["Unprocessable Content", -32022, "unprocessable request"],
  425: ["Too Early", -32025, "too early"],
  429: ["Too Many Requests", -32029, "rate limit exceeded for this project key"],
  431: ["Request Header Fields Too Large", -32031, "request headers too large"],
  500: ["Internal Server Error", -32603, "internal gateway error"],
  501: ["Not Implemented", -32601, "not implemented"],
  502: ["Bad Gateway", -32002, "upstream node returned an invalid response"],
  503: ["Service Unavailable", -32053, "node unavailable or not synced"],
  504: ["Gateway Timeout", -32054, "upstream node timed out"],
};

export const ERROR_STATUS_CODES = Object.keys(ERROR_STATUSES);
export const JSON_TYPE = "application/json";
export const ERRORS_SECTION = "json-errors";

export const errorBody = (code: number, message: string) => JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
/** Each status's JSON-RPC style code and message, as its error file has them. */
export const statusErrors = (): Record<string, { code: number; message: string }> =>
  Object.fromEntries(Object.entries(ERROR_STATUSES).map(([s, [, code, message]]) => [s, { code, message }]));
/** The body of the gateway's own answer with this status, as its error file has it. */
export const statusBody = (status: number) => errorBody(ERROR_STATUSES[status][1], ERROR_STATUSES[status][2]);

/** The words of an `http-request return` of a JSON-RPC style error (its code the status's, unless given). */
export function jsonReturnAction(status: number, message: string, code = ERROR_STATUSES[status][1]): string[] {
  return ["return", "status", String(status), "content-type", JSON_TYPE, "string", errorBody(code, message)];
}

/** A rule refusing with a JSON error when `cond` holds. */
export const refuse = (status: number, message: string, cond?: Cond, why?: string, code?: number): Rule => ({ phase: "http-request", action: jsonReturnAction(status, message, code), cond, why });

/** JSON-RPC 2.0's own codes (5.1) for a body that is not JSON, and for JSON that is no request. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/**
 * Refusals decided before the body is waited for become `deny` with the same answer. HAProxy
 * (3.2, src/http_ana.c) ends a request answered by `deny` at once (http_reply_and_close aborts
 * its side), while after `return` the stream stays until the client has sent the whole body: an
 * HTTP/2 stream refused over a bound while its body trickles kept a buffer for up to the body
 * timeout, and many of them took the pool the other addresses' calls needed. An HTTP/1.1
 * connection is kept open either way. Answers other than refusals (a CORS preflight's 204) and
 * refusals of a body already in keep `return`.
 */
export function endBeforeBody(rules: readonly Rule[]): Rule[] {
  const body = rules.findIndex((r) => r.phase === "http-request" && r.action[0] === "wait-for-body");
  return rules.map((r, i) => {
    const refusal = r.phase === "http-request" && r.action[0] === "return" && r.action[1] === "status" && Number(r.action[2]) >= 400;
    return refusal && (body < 0 || i < body) ? { ...r, action: ["deny", ...r.action.slice(1)] } : r;
  });
}

/** The same refusal as a plain directive (backends without conditions). */
export const refuseDirective = (status: number, message: string): Directive => ["http-request", ...jsonReturnAction(status, message)];

/** errors/<status>.http files, raw HTTP responses HAProxy sends as they are. */
export function errorFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [status, [reason]] of Object.entries(ERROR_STATUSES)) {
    const body = statusBody(Number(status));
    files[`errors/${status}.http`] =
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n${body}`;
  }
  return files;
}

export const errorFilesDirectives = (dir: string): Directive[] => ERROR_STATUS_CODES.map((s) => ["errorfile", s, `${dir}/errors/${s}.http`]);
