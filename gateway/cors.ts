/**
 * Browsers: CORS preflights answered by the gateway (they never reach a node), and
 * Access-Control-Allow-Origin on every answer, the gateway's own errors included, so a page sees
 * a 401 or 429 as such rather than as an opaque network failure. Plus HSTS on HTTPS answers.
 */
import { afterResponse, anon, req, type Cond, type Rule } from "./model.js";

/** What the client library (and common JSON-RPC clients) send from a page. */
const ALLOW_HEADERS = "Content-Type, Accept, X-Geolocation, Authorization, Solana-Client";
const ALLOW_METHODS = "GET, POST, HEAD, OPTIONS";

/**
 * @param served the condition "this request is for a gateway path or a public hostname".
 */
export function corsRules(origins: readonly string[], served: Cond): Rule[] {
  const any = origins.includes("*");
  const allowed: Cond = any ? [] : anon("req.hdr(origin)", "-m", "str", ...origins);
  return [
    req(["set-var(txn.cors)", any ? "str(*)" : "req.hdr(origin)"], [...served, ...allowed], "CORS: the origin this answer allows, when the request may be answered to a page."),
    req(
      ["return", "status", "204", "hdr", "Access-Control-Allow-Methods", ALLOW_METHODS, "hdr", "Access-Control-Allow-Headers", ALLOW_HEADERS, "hdr", "Access-Control-Max-Age", "86400"],
      ["METH_OPTIONS", ...served, ...anon("req.hdr(access-control-request-method)", "-m", "found")],
      "Preflights are answered here: they carry no body and must never reach a node.",
    ),
    afterResponse(["set-header", "Access-Control-Allow-Origin", "%[var(txn.cors)]"], anon("var(txn.cors)", "-m", "found")),
    ...(any ? [] : [afterResponse(["add-header", "Vary", "Origin"])]),
    afterResponse(["set-header", "Strict-Transport-Security", "max-age=31536000"], [], "HTTPS only: browsers never try the key-carrying paths over plain HTTP again."),
  ];
}
