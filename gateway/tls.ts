/**
 * Process-wide settings and the listeners around the HTTPS frontend: global (TLS, runtime API,
 * Lua), defaults (timeouts, JSON error pages), port 80 (ACME challenges; keys never accepted in
 * clear), the ACME responder and the metrics listener.
 */
import { ERRORS_SECTION, errorFilesDirectives, refuse, refuseDirective } from "./errors.js";
import { anon, req, type Directive, type Section } from "./model.js";
import { normalizeRules } from "./normalize.js";
import { clientTimeout, tuneDirectives } from "./limits.js";
import { hostIs } from "./routes.js";
import type { GatewayOptions } from "./types.js";

export function globalSection(o: GatewayOptions, lua: readonly Directive[], extra: readonly Directive[] = []): Section {
  return {
    header: ["global"],
    directives: [
      ["log", "stdout", "format", "raw", "local0", "info"],
      ["maxconn", String(o.maxConnections)],
      ...(o.runAs ? [["user", o.runAs], ["group", o.runAs]] : []),
      ...(o.threads ? [["nbthread", String(o.threads)]] : []),
      // For the operator only: level admin can add keys to the key map or disable servers, so the
      // ACME client gets certSocket instead. The key map holds SHA-256 digests: `show map` prints no key.
      ...(o.adminSocket ? [["stats", "socket", o.adminSocket, "mode", "600", "level", "admin"]] : []),
      ...(o.adminLoopbackPort ? [["stats", "socket", `ipv4@127.0.0.1:${o.adminLoopbackPort}`, "level", "admin"]] : []),
      // normalize-uri is still marked experimental in HAProxy 3.2.
      ["expose-experimental-directives"],
      ...lua,
      ...extra,
      ...tuneDirectives(o),
      // Mozilla "intermediate" TLS: TLS 1.2+ with forward-secret AEAD ciphers.
      ["ssl-default-bind-options", "ssl-min-ver", "TLSv1.2"],
      ["ssl-default-bind-ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"],
      ["ssl-default-bind-ciphersuites", "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"],
      ["tune.ssl.default-dh-param", "2048"],
    ],
  };
}

/** How long a client may take to complete the TLS handshake once connected. */
export const HANDSHAKE_TIMEOUT = "10s";

export function defaultsSection(o: GatewayOptions): Section {
  return {
    header: ["defaults"],
    directives: [
      ["mode", "http"],
      ["log", "global"],
      ["option", "dontlognull"],
      ["timeout", "connect", "5s"],
      ["timeout", "client", clientTimeout(o)],
      // The TLS handshake would otherwise have `timeout client`, which WebSockets need long.
      ["timeout", "client-hs", HANDSHAKE_TIMEOUT],
      ["timeout", "server", "60s"],
      ["timeout", "http-request", "10s"],
      ["timeout", "http-keep-alive", "15s"],
      ["timeout", "queue", "10s"],
      ["timeout", "client-fin", "10s"],
      // WebSockets with no traffic either way close after this (subscriptions see new heads).
      ["timeout", "tunnel", `${o.wsIdleTimeoutSeconds}s`],
      ["errorfiles", ERRORS_SECTION],
      ["default-server", ...(o.resolver ? ["resolvers", "docker"] : []), "init-addr", "last,libc,none"],
    ],
  };
}

export const errorsSection = (o: GatewayOptions): Section => ({ header: ["http-errors", ERRORS_SECTION], directives: errorFilesDirectives(o.filesDir) });

export const resolverSections = (o: GatewayOptions): Section[] =>
  o.resolver ? [{ header: ["resolvers", "docker"], directives: [["nameserver", "dns", o.resolver], ["hold", "valid", "10s"], ["resolve_retries", "3"]] }] : [];

/**
 * Port 80: ACME challenges; gateway paths refused with a JSON error (a redirect would invite
 * clients to keep sending keys in clear); anything else redirected to the configured name's root
 * (or, path kept, to the public hostname it matched), never to whatever Host the client sent.
 */
export function httpSections(o: GatewayOptions, hostnames: readonly string[]): Section[] {
  // RFC 8555 8.3: a token is base64url; nothing else under the prefix reaches the responder.
  const acmePath = anon("path_beg", "/.well-known/acme-challenge/");
  const acme = anon("path", "-m", "reg", String.raw`^/\.well-known/acme-challenge/[A-Za-z0-9_-]+$`);
  const port = o.httpsPort === 443 ? "" : `:${o.httpsPort}`;
  const domain = o.domain ?? "localhost";
  const frontend: Section = {
    header: ["frontend", "http"],
    comment: "Port 80: ACME HTTP-01 challenges; no key is ever served over plain HTTP.",
    directives: [
      ["bind", `${o.bindAddress}:${o.httpPort}`],
      // A plain-HTTP request can carry a key in its path too: the URI is never logged.
      ["log-format", "%ci:%cp [%tr] %ft %b/%s %Ta %ST %B %HM"],
    ],
    rules: [
      ...normalizeRules(),
      // In any case, and wherever it stands: a key sent to /x/%2FGATEWAY/... was sent in clear all the same.
      refuse(403, `plain HTTP is not served: use https://${domain}${port}/gateway/... (a key sent in clear should be replaced)`, anon("path", "-i", "-m", "sub", "gateway")),
      refuse(404, "not an ACME challenge", [...acmePath, "!", ...acme]),
      // Cosmos public hostnames take no key: their paths go along.
      ...hostnames.map((h) => req(["redirect", "prefix", `https://${h}${port}`, "code", "301"], [...hostIs(h), "!", ...acme])),
      // The stack's own name serves keyed paths only: its redirect carries no path, so no key is echoed.
      req(["redirect", "location", `https://${domain}${port}/`, "code", "301"], ["!", ...acme]),
      ...(o.acmeResponder ? [{ phase: "use_backend" as const, action: ["be_acme"], cond: acme }] : []),
    ],
  };
  const acmeBackend: Section[] = o.acmeResponder ? [{ header: ["backend", "be_acme"], directives: [["server", "acme", o.acmeResponder]] }] : [];
  return [frontend, ...acmeBackend];
}

/** Connections the ACME client's socket serves at once; more wait in the kernel's backlog. */
export const CERT_SOCKET_CONNECTIONS = 4;
/** The longest PEM it takes: a chain of a few certificates and a key. */
export const CERT_PEM_MAX_BYTES = 64 * 1024;

/**
 * The ACME client's socket: a POST of a PEM for certFile, and nothing else (gateway/lua/certs.lua).
 * A few connections at once and none held idle, so what waits on it never takes from the
 * connections the public listener may hold; the PEM's Content-Length is bounded before its body
 * is read, and the body is waited for whole.
 */
export const certSections = (o: GatewayOptions): Section[] => {
  if (!o.certSocket) return [];
  const refuseText = (status: number, text: string, ...cond: string[]) => ["http-request", "return", "status", String(status), "content-type", "text/plain", "string", `refused: ${text}`, "if", ...cond];
  return [{
    header: ["frontend", "cert_update"],
    comment: "Certificate renewals from the ACME client: the only thing its socket can ask.",
    directives: [
      ["mode", "http"],
      ["bind", o.certSocket, "mode", "600"],
      ["maxconn", String(CERT_SOCKET_CONNECTIONS)],
      ["timeout", "client", "10s"],
      ["timeout", "http-request", "10s"],
      ["no", "log"],
      refuseText(405, "only a POST of a PEM is taken", "!", "METH_POST"),
      refuseText(411, "a PEM is sent with its Content-Length", "!", ...anon("req.hdr(content-length)", "-m", "found")),
      refuseText(413, `longer than ${CERT_PEM_MAX_BYTES} bytes`, ...anon("req.hdr_val(content-length)", "gt", String(CERT_PEM_MAX_BYTES))),
      ["http-request", "wait-for-body", "time", "10s"],
      ["http-request", "use-service", "lua.cert_update"],
    ],
  }];
};

/** Where HAProxy's own Prometheus exporter answers on the metrics listener. */
export const EXPORTER_PATH = "/metrics";
/** `relayed`: paths answered by another service's metrics, through a backend. */
export const metricsSection = (o: GatewayOptions, extra: readonly Directive[] = [], relayed: readonly { path: string; backend: string }[] = []): Section => ({
  header: ["frontend", "metrics"],
  comment: "Prometheus metrics, on the private network only.",
  directives: [
    ["bind", `${o.metrics.address}:${o.metrics.port}`],
    ["no", "log"],
    ["http-request", "use-service", "prometheus-exporter", "if", ...anon("path", EXPORTER_PATH)],
    ...extra,
    relayed.length
      ? [...refuseDirective(404, "only the /metrics paths are served here"), "unless", ...anon("path", ...relayed.map((r) => r.path))]
      : refuseDirective(404, "only /metrics (and /metrics/cache) is served here"),
    ...relayed.map((r) => ["use_backend", r.backend, "if", ...anon("path", r.path)]),
  ],
});
