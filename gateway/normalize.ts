/**
 * Path normalisation, the same on both listeners, before anything matches a path: no // or . or ..
 * segment (plain or %2e) reaches a route, an upstream's base path or the ACME responder, and
 * unreserved characters sent percent-encoded (`/%67ateway`) are matched as the plain ones. An
 * encoded slash (%2F) is left as sent: Cosmos REST paths carry one inside a segment (an IBC denom,
 * `ibc%2F27394...`), so it is refused only where a path names a method (policy.ts, URI calls).
 */
import { refuse } from "./errors.js";
import { anon, req, type Rule } from "./model.js";

/**
 * Longest URI (path and query) the gateway takes: HAProxy would take a request line as long as
 * its buffers (a body's size), and relay it whole. 16 KiB, as the headers' bound.
 */
export const MAX_URI_BYTES = 16 * 1024;

export const normalizeRules = (): Rule[] => [
  refuse(414, `URI longer than ${MAX_URI_BYTES} bytes`, anon("url,length", "gt", String(MAX_URI_BYTES)), "No URI longer than the headers' bound reaches a node."),
  // HTTP/2 requests reach a node in origin form already; HTTP/1.1 ones sent in absolute form
  // (`POST https://host/gateway/...`, which servers must accept) are relayed as sent otherwise.
  // `http://host?x` has no path: left as it is (a set-uri to `?x` would fail, a 500), it reaches no route.
  req(["set-uri", "%[pathq]"], [...anon("url", "-m", "beg", "-i", "http://", "https://"), ...anon("req.ver", "1.1", "1.0"), ...anon("pathq", "-m", "beg", "/")], "Absolute-form requests reach the nodes in origin form."),
  // Each pass only where it can change something: a rewrite costs more than the test.
  req(["normalize-uri", "path-merge-slashes"], anon("path", "-m", "sub", "//"), "Paths are normalised before routing: no //, /./ or .. (plain or %2e) reaches an upstream's base path."),
  // `strict` also makes the conditional form work: without it, `percent-decode-unreserved if ...`
  // is parsed but never decodes (2.6.12 and 3.2.0 alike); a bad %-sequence gets 400.
  req(["normalize-uri", "percent-decode-unreserved", "strict"], anon("path", "-m", "sub", "%")),
  req(["normalize-uri", "path-strip-dot"], anon("path", "-m", "sub", "/.")),
  req(["normalize-uri", "path-strip-dotdot", "full"], anon("path", "-m", "sub", "/.")),
];
