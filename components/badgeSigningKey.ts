import * as command from "@pulumi/command";
import * as pulumi from "@pulumi/pulumi";
import { GENERATE_KEY, readSigningKey } from "../badges/token.js";

export interface BadgeSigningKeyArgs {
  /** `badges.signingKeyGeneration`: a new value makes a new key, and every badge signed with the old one stops working. */
  readonly generation: number;
}

/**
 * The key badges are signed with (ES256), made on the first `pulumi up` with badges and kept in
 * the state as a secret: the badge service gets the private half, the gateway the public one.
 */
export class BadgeSigningKey extends pulumi.ComponentResource {
  /** The private key (PKCS#8 DER, base64), a Pulumi secret. */
  readonly privateKey: pulumi.Output<string>;
  /** The public key (SPKI PEM): no secret. */
  readonly publicKeyPem: pulumi.Output<string>;

  constructor(name: string, args: BadgeSigningKeyArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:BadgeSigningKey", name, {}, opts);
    const made = new command.local.Command(
      `${name}-generate`,
      // Never printed: the engine would log stdout otherwise.
      { create: GENERATE_KEY, triggers: [args.generation], logging: "none" },
      { parent: this, additionalSecretOutputs: ["stdout"] },
    );
    this.privateKey = pulumi.secret(made.stdout);
    this.publicKeyPem = pulumi.unsecret(made.stdout.apply((k) => readSigningKey(k).publicKeyPem));
    this.registerOutputs({ publicKeyPem: this.publicKeyPem });
  }
}
