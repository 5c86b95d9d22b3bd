/**
 * The gateway's internal listeners: the split batch relay (batch.ts), the response cache's fetch
 * listener (cache.ts) and each multi-node chain's read and send hops (failover.ts). They are
 * abstract sockets, which any process in HAProxy's network namespace can open, and they relay to
 * the nodes with no key and no policy. So each takes only requests that carry a secret HAProxy
 * draws when it starts (a random UUID from its generator, seeded from /dev/urandom and OpenSSL),
 * kept in a process variable and never written to a file, a log or an answer: the Lua programs
 * that call a listener read it (rpcstack/internal.lua), the hop backends set it natively, and a
 * listener refuses anything else with 403 before it is routed, then drops the header. Pure.
 */
import { refuse } from "./errors.js";
import { anon, req, type Directive, type Rule } from "./model.js";

/** The process variable holding the secret, and the header that carries it. */
export const INTERNAL_SECRET_VAR = "proc.rpcstack_internal";
export const INTERNAL_HEADER = "x-rpcstack-internal";

/** Global line: the secret, drawn once per HAProxy process. */
export const internalSecretGlobal = (): Directive => ["set-var", INTERNAL_SECRET_VAR, "uuid(4)"];

/** What rpcstack/internal.lua reads from the stack's data (gateway_data.lua). */
export const internalData = () => ({ header: INTERNAL_HEADER, var: INTERNAL_SECRET_VAR });

/**
 * What uuid(4) gives where HAProxy seeds its generator only after the configuration is parsed
 * (3.2.0; upstream moved the seeding earlier in 2025): a secret anyone could guess, so the
 * listeners then refuse everything rather than take it.
 */
export const UNSEEDED_UUID = "00000000-0000-4000-8000-000000000000";

/** The first rules of every internal listener: no secret, no relay; the header goes no further. */
export const internalGate = (): Rule[] => [
  refuse(403, "internal listener", ["!", ...anon(`req.hdr(${INTERNAL_HEADER}),strcmp(${INTERNAL_SECRET_VAR})`, "eq", "0"), "or", ...anon(`var(${INTERNAL_SECRET_VAR})`, "-m", "str", UNSEEDED_UUID)], "Only the gateway's own requests: they carry the secret HAProxy drew at start (internal.ts)."),
  req(["del-header", INTERNAL_HEADER]),
];

/** A client's own copy of the header goes no further than the public listener: nodes never see the name. */
export const internalStrip = (): Rule => req(["del-header", INTERNAL_HEADER], anon(`req.hdr(${INTERNAL_HEADER})`, "-m", "found"));

/** A backend line that sends the secret with each request, to the internal listener it relays to. */
export const internalSign = (): Directive => ["http-request", "set-header", INTERNAL_HEADER, `%[var(${INTERNAL_SECRET_VAR})]`];
