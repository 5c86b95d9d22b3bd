/**
 * Path normalisation, the same on both listeners, before anything matches a path: no // or ..
 * (plain or %2e) reaches a route, an upstream's base path or the ACME responder, and unreserved
 * characters sent percent-encoded (`/%67ateway`) are matched as the plain ones.
 */
import { anon, req, type Rule } from "./model.js";

export const normalizeRules = (): Rule[] => [
  // Each pass only where it can change something: a rewrite costs more than the test.
  req(["normalize-uri", "path-merge-slashes"], anon("path", "-m", "sub", "//"), "Paths are normalised before routing: no // or .. (plain or %2e) reaches an upstream's base path."),
  // `strict` also makes the conditional form work: without it, `percent-decode-unreserved if ...`
  // is parsed but never decodes (2.6.12 and 3.2.0 alike); a bad %-sequence gets 400.
  req(["normalize-uri", "percent-decode-unreserved", "strict"], anon("path", "-m", "sub", "%")),
  req(["normalize-uri", "path-strip-dotdot", "full"], anon("path", "-m", "sub", "/.")),
];
