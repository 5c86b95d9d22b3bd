/**
 * The badge token, between the badge service that signs it (badges/) and the gateway that checks
 * it on the request path (gateway/badges.ts, its Lua ledger given the skew in gateway_data.lua):
 * where it is asked for, how it is signed, the claims it carries and how late it is still good.
 * Pure data; badges/ may import gateway/, never the other way. The client library (client/badge.ts)
 * is bundled on its own for browsers and only takes the service's URL: it states none of these.
 */

/** Where the gateway serves the badge service, the one path the service answers besides /health. */
export const BADGE_PATH = "/badge";
/** The algorithm badges are signed with: ECDSA P-256, whose public key is no secret. */
export const BADGE_ALG = "ES256";
/** The issuer every badge names. */
export const BADGE_ISSUER = "rpcstack-badges";
/** A badge is still accepted this long past its `exp` (the service and the gateway may disagree by as much). */
export const BADGE_CLOCK_SKEW_SECONDS = 5;
/** A badge request is a small JSON object: larger ones are refused by the gateway (Content-Length) and the service (chunked). */
export const BADGE_MAX_BODY_BYTES = 4096;

/** What a badge says; the gateway reads sub, exp, jti, alw and chains. */
export interface BadgeClaims {
  readonly iss: typeof BADGE_ISSUER;
  /** The project id: the key name the gateway counts the badge's calls under. */
  readonly sub: string;
  /** `{ <chain claim>: 1 }` for each chain the badge may call. */
  readonly chains: Readonly<Record<string, 1>>;
  /** Calls the badge may make over its life. */
  readonly alw: number;
  readonly jti: string;
  readonly iat: number;
  readonly exp: number;
}

/** A claim as the gateway's JSONPath (jwt_payload_query) names it. */
export const claimPath = (claim: keyof BadgeClaims) => `$.${claim}`;

/** The claim under `chains` that names a chain: its path with `-` as `_` (paths have no `_`), so JSONPath reads it plainly. */
export const chainClaim = (path: string) => path.replace(/-/g, "_");
