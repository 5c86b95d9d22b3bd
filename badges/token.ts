/** Badges as JWTs signed with ES256 (jose), and the signing key as operators hand it over. */
import { createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { SignJWT } from "jose";
import { BADGE_ALG, type BadgeClaims } from "../gateway/badgeContract.js";

/**
 * A shell command that writes a new EC P-256 private key (PKCS#8 DER, base64) to stdout: what
 * `pulumi up` runs once per key generation (components/badgeSigningKey.ts), where Pulumi runs,
 * which has Node.js. The text is the same on every machine, so an update never sees it change.
 */
export const GENERATE_KEY = `node -e 'process.stdout.write(require("crypto").generateKeyPairSync("ec",{namedCurve:"P-256"}).privateKey.export({type:"pkcs8",format:"der"}).toString("base64"))'`;

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
    throw new Error(`the badge signing key must be an EC P-256 key (${BADGE_ALG}): openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`);
  }
  return { privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: "spki", format: "pem" }).toString() };
}

export const signBadge = (claims: BadgeClaims, key: SigningKey): Promise<string> =>
  new SignJWT({ ...claims }).setProtectedHeader({ alg: BADGE_ALG, typ: "JWT" }).sign(key.privateKey);
