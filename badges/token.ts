/** Badges as JWTs signed with ES256 (jose), and the signing key as operators hand it over. */
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import type { BadgeClaims } from "./issue.js";

export interface SigningKey {
  readonly privateKey: KeyObject;
  /** The public half as a PEM (SPKI): what the gateway verifies badges with. */
  readonly publicKeyPem: string;
}

/**
 * A P-256 private key as PKCS#8: PEM, or its DER in base64 on one line (what fits an environment
 * variable). Anything else is refused with a message that never repeats the key.
 */
export function readSigningKey(text: string): SigningKey {
  const t = text.trim();
  let privateKey: KeyObject;
  try {
    privateKey = t.startsWith("-----BEGIN") ? createPrivateKey(t) : createPrivateKey({ key: Buffer.from(t, "base64"), format: "der", type: "pkcs8" });
  } catch {
    throw new Error("the badge signing key is not a PKCS#8 private key (PEM, or its DER in base64)");
  }
  if (privateKey.asymmetricKeyType !== "ec" || privateKey.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
    throw new Error("the badge signing key must be an EC P-256 key (ES256): openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256");
  }
  return { privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString() };
}

export const signBadge = (claims: BadgeClaims, key: SigningKey): Promise<string> =>
  new SignJWT({ ...claims }).setProtectedHeader({ alg: "ES256", typ: "JWT" }).sign(key.privateKey);
