/**
 * Badges: short-lived keys for front ends (docs/badges.md). A badge is a JWT signed with ES256 by
 * the badge service (badges/); HAProxy checks it itself on the request path, with its own
 * converters (jwt_verify, jwt_payload_query), and never asks the service:
 *   - signature, against the public key file (a badge with another algorithm, or none, fails it);
 *   - expiry (`exp`), granting BADGE_CLOCK_SKEW_SECONDS;
 *   - project (`sub`): one the stack still lists; the request's key name becomes `badge:<project>`,
 *     so the project's badges share one rate limit (their own, when the project has one), apart
 *     from any project key's;
 *   - chain scope (`chains.<claim>` = 1 for the chain of the path);
 *   - allowance (`alw` calls per badge, `jti` its id), counted for the whole gateway by the Lua
 *     ledger (gateway/lua/badges.lua, rpcstack/badge_ledger.lua), WebSocket messages included.
 * The service itself is served at BADGE_PATH, behind a per-address request rate.
 */
import { JSON_TYPE, errorBody, refuse } from "./errors.js";
import { afterResponse, anon, req, type Cond, type Directive, type Rule, type Section } from "./model.js";
import type { GatewayChain, GatewayOptions } from "./types.js";
import { CLIENT_ADDRESS, OWN_RATE_VAR, callsPerWindowAt, ownRates } from "./limits.js";
import { BADGE_ALG, BADGE_CLOCK_SKEW_SECONDS, BADGE_MAX_BODY_BYTES, BADGE_PATH, chainClaim, claimPath, type BadgeClaims } from "./badgeContract.js";

/** Badges the gateway keeps counts for at once (about 100 bytes each); a new one past it gets 503. */
export const BADGE_MAX_HELD = 200_000;
/** The public key, and the projects whose badges are accepted, among the gateway's files. */
export const BADGE_KEY_FILE = "badge.pub.pem";
export const BADGE_PROJECTS_FILE = "badge_projects.map";
/** `<projectId> <calls per rate window>` for the projects with a rate of their own. */
export const BADGE_RATES_FILE = "badge_rates.map";
/** The key name a project's badges are counted under (rate, usage, quota, log): `badge:<projectId>`. */
export const BADGE_NAME_PREFIX = "badge:";
export const badgeKeyName = (projectId: string) => `${BADGE_NAME_PREFIX}${projectId}`;

/** A JWS in compact form: three base64url parts (a project key has no dot, so never looks like one). */
const JWT_SHAPE = String.raw`^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$`;

/** Seconds the badge has left, the skew included (an ACL pattern cannot start with "-": it would read as a flag). */
const SECONDS_LEFT = `var(txn.badge_exp),add(${BADGE_CLOCK_SKEW_SECONDS}),sub(txn.now)`;
const EXPIRED = "badge expired: ask the badge server for a new one";
const has = (v: string): Cond => anon(`var(${v})`, "-m", "found");
const not = (c: Cond): Cond => ["!", ...c];

export interface BadgeConds {
  /** A gateway path whose key is shaped like a badge. */
  readonly token: Cond;
  /** ... and it passed every check (its project is now the key name). */
  readonly accepted: Cond;
}

export const badgeConds = (gateway: Cond): BadgeConds => {
  const token = [...gateway, ...anon("var(txn.key)", "-m", "reg", JWT_SHAPE)];
  return { token, accepted: [...token, ...has("txn.badge_project")] };
};

/** After the key map: a badge that passes signature, expiry and project names the request's key. */
export function badgeAuthRules(o: GatewayOptions, c: BadgeConds): Rule[] {
  if (!o.badges) return [];
  const f = (name: string) => `${o.filesDir}/${name}`;
  const signed = [...c.token, ...anon("var(txn.badge_sig)", "-m", "int", "1")];
  const live = [...signed, ...anon(SECONDS_LEFT, "ge", "0")];
  // What badge_seen did not already set from a badge accepted before.
  const unread = (v: string) => not(has(`txn.${v}`));
  const claim = (v: string, name: keyof BadgeClaims, type = "") => req([`set-var(txn.${v})`, `var(txn.key),jwt_payload_query('${claimPath(name)}'${type ? `,'${type}'` : ""})`], [...c.accepted, ...unread(v)]);
  return [
    // A badge this gateway accepted before (the same bytes: their SHA-256) is not checked again.
    req(["set-var(txn.badge_digest)", "var(txn.key),digest(sha256)"], c.token, "Badges: signed tokens checked here, never by asking the badge service."),
    req(["lua.badge_seen"], c.token),
    req(["set-var(txn.badge_sig)", `var(txn.key),jwt_verify("${BADGE_ALG}","${f(BADGE_KEY_FILE)}")`], [...c.token, ...unread("badge_sig")]),
    req(["set-var(txn.now)", "date()"], signed),
    req(["set-var(txn.badge_exp)", `var(txn.key),jwt_payload_query('${claimPath("exp")}','int')`], [...signed, ...unread("badge_exp")]),
    req(["set-var(txn.badge_project)", `var(txn.key),jwt_payload_query('${claimPath("sub")}'),map(${f(BADGE_PROJECTS_FILE)})`], [...live, ...unread("badge_project")]),
    // Counted under a name of its own: a project's badges never spend the rate or the quota of a
    // project key that has the project's name (its back end).
    req(["set-var-fmt(txn.keyname)", `${BADGE_NAME_PREFIX}%[var(txn.badge_project)]`], c.accepted),
    // A project absent from the map has no value: the gateway's rate applies (callRate).
    ...(ownRates(o).length > 0 ? [req([`set-var(${OWN_RATE_VAR})`, `var(txn.badge_project),map_str_int(${f(BADGE_RATES_FILE)})`], c.accepted)] : []),
    claim("badge_jti", "jti"),
    claim("badge_alw", "alw", "int"),
    // A page's WebSockets and subscriptions count per badge: a front end has many pages open.
    req(["set-var(txn.ws_owner)", "str(badge:),concat(,txn.badge_jti,)"], c.accepted),
  ];
}

/** Why a badge-shaped key was refused (after the wrong-key count, before the generic 401). */
export function badgeRefusals(o: GatewayOptions, c: BadgeConds): Rule[] {
  if (!o.badges) return [];
  const unsigned = not(anon("var(txn.badge_sig)", "-m", "int", "1"));
  return [
    refuse(401, "badge signature invalid: tampered with, unsigned, or made with a signing key this gateway no longer uses", [...c.token, ...unsigned]),
    refuse(401, EXPIRED, [...c.token, ...not(has("txn.badge_project")), ...anon(SECONDS_LEFT, "lt", "0")]),
    refuse(401, "badge of a project this gateway no longer serves", [...c.token, ...not(has("txn.badge_project"))]),
  ];
}

/** A badge covers the chains its project lists: checked once the chain is known to be served. */
export function badgeScopeRules(o: GatewayOptions, chains: readonly GatewayChain[], c: BadgeConds): Rule[] {
  if (!o.badges) return [];
  return [
    ...chains.map((ch) => req(["set-var(txn.badge_scope)", `var(txn.key),jwt_payload_query('${claimPath("chains")}.${chainClaim(ch.path)}','int')`], [...c.accepted, ...not(has("txn.badge_scope")), ...anon("var(txn.chain)", "-m", "str", ch.path)])),
    {
      phase: "http-request",
      action: ["return", "status", "403", "content-type", JSON_TYPE, "lf-string", errorBody(-32003, "badge of project %[var(txn.badge_project)] does not cover chain %[var(txn.chain)]")],
      cond: [...c.accepted, ...not(anon("var(txn.badge_scope)", "-m", "int", "1"))],
    },
  ];
}

/**
 * After the rate limit and the quota: the calls count against the badge's allowance (a call refused
 * before it does not). `beforeRefusal`: what gives back what was counted before, when the badge
 * refuses (the quota, quotas.ts).
 */
export function badgeAllowanceRules(o: GatewayOptions, c: BadgeConds, beforeRefusal: (refused: Cond) => Rule[] = () => []): Rule[] {
  if (!o.badges) return [];
  const verdict = (v: string) => [...c.accepted, ...anon("var(txn.badge_verdict)", "-m", "str", v)];
  return [
    req(["lua.badge_spend"], c.accepted),
    ...beforeRefusal([...c.accepted, ...anon("var(txn.badge_verdict)", "-m", "found")]),
    refuse(429, "badge allowance used up: ask the badge server for a new badge", verdict("spent")),
    refuse(401, EXPIRED, verdict("expired")),
    refuse(503, "the gateway holds as many badges as it may: try again shortly", verdict("full")),
  ];
}

/** A request no route took (be_unrouted): the calls badge_spend counted against its badge's allowance are given back. */
export const badgeRefund = (o: GatewayOptions, phase: typeof req | typeof afterResponse = req, cond: Cond = []): Rule[] =>
  o.badges ? [phase(["lua.badge_refund"], [...anon("var(txn.badge_jti)", "-m", "found"), "!", ...anon("var(txn.badge_verdict)", "-m", "found"), ...cond])] : [];

/** `path /badge`: the badge service, behind a per-address rate; nothing else of it is served. */
export const BADGE_ACL: Directive = ["acl", "badge_path", "path", BADGE_PATH];
const badgePath: Cond = ["badge_path"];

export function badgeServiceRules(o: GatewayOptions): Rule[] {
  if (!o.badges) return [];
  return [
    req(["track-sc0", CLIENT_ADDRESS, "table", "st_badge_addresses"], badgePath, "Badge requests: a rate per address (sc0 is free on this path: it names no key)."),
    refuse(429, "too many badge requests from this address: wait a minute", [...badgePath, ...anon("sc_http_req_rate(0)", "gt", String(o.badges.perAddressPerMinute))]),
    refuse(429, "too many requests in progress from this address", [...badgePath, ...anon("sc_conn_cur(0)", "gt", String(o.maxConnectionsPerAddress))]),
    refuse(405, "the badge server takes POST (and CORS preflights)", [...badgePath, "!", ...anon("method", "POST", "OPTIONS")]),
    // Content-Length here; a chunked body is bounded by the service itself.
    refuse(413, `badge request larger than ${BADGE_MAX_BODY_BYTES} bytes`, [...badgePath, ...anon("req.hdr_val(content-length)", "gt", String(BADGE_MAX_BODY_BYTES))]),
    { phase: "use_backend", action: ["be_badges"], cond: badgePath },
  ];
}

export function badgeSections(o: GatewayOptions): Section[] {
  if (!o.badges) return [];
  return [
    {
      header: ["backend", "be_badges"],
      comment: "The badge service: it signs badges; the gateway checks them without it.",
      directives: [
        ["option", "httpchk", "GET", "/health"],
        ["server", "badges", o.badges.service, "check", "inter", "5s"],
      ],
    },
    { header: ["backend", "st_badge_addresses"], directives: [["stick-table", "type", "ipv6", "size", "1m", "expire", "60s", "store", "http_req_rate(60s),conn_cur"]] },
  ];
}

/** The project map: badges of a project the stack no longer lists are refused at once. */
export function badgeFiles(o: GatewayOptions): Record<string, string> {
  if (!o.badges) return {};
  const rates = ownRates(o);
  return {
    [BADGE_PROJECTS_FILE]: o.badges.projects.map((p) => `${p} ${p}\n`).join(""),
    ...(rates.length > 0 ? { [BADGE_RATES_FILE]: rates.map(([p, perSecond]) => `${p} ${callsPerWindowAt(perSecond)}\n`).join("") } : {}),
  };
}

/** What the Lua programs read about badges (gateway_data.lua). */
/** The ledger's bounds: `max_held` badges at once, each of `projects` holding at most its equal share. */
export const badgeData = (o: GatewayOptions) => (o.badges ? { badges: { max_held: BADGE_MAX_HELD, skew: BADGE_CLOCK_SKEW_SECONDS, projects: o.badges.projects.length } } : {});
