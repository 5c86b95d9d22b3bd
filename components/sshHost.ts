import * as command from "@pulumi/command";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { Tier } from "../config/index.js";
import { INSTALL_DOCKER_SCRIPT, PREFLIGHT_SCRIPT, assertHostFits } from "../hosts/preflight.js";
import type { Host } from "./host.js";

export interface SshHostArgs {
  readonly address: string;
  readonly user: string;
  readonly port: number;
  /** Private key for `user` (a Pulumi secret). */
  readonly privateKey: pulumi.Input<string>;
  readonly tier: Tier;
}

/**
 * An existing server over SSH. A preflight stops `pulumi up` when the server is smaller than the
 * tier; Docker is installed from the distribution's packages when missing.
 */
export class SshHost extends pulumi.ComponentResource implements Host {
  readonly publicAddress: pulumi.Output<string>;
  readonly dockerProvider: docker.Provider;

  constructor(name: string, args: SshHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:SshHost", name, {}, opts);
    const connection = { host: args.address, port: args.port, user: args.user, privateKey: pulumi.secret(args.privateKey) };
    const label = `${args.user}@${args.address}:${args.port}`;
    const preflight = new command.remote.Command(
      `${name}-preflight`,
      // Runs on every `pulumi up`: a server can shrink (disk fills) between deployments.
      { connection, create: PREFLIGHT_SCRIPT, triggers: [Date.now()] },
      { parent: this },
    );
    const installDocker = new command.remote.Command(
      `${name}-install-docker`,
      {
        connection,
        // Only once the server is known to fit the tier.
        create: preflight.stdout.apply((out) => {
          assertHostFits(label, out, args.tier, { installsDocker: true });
          return INSTALL_DOCKER_SCRIPT;
        }),
      },
      { parent: this },
    );
    this.publicAddress = pulumi.output(args.address);
    this.dockerProvider = new docker.Provider(
      `${name}-docker`,
      { host: `ssh://${args.user}@${args.address}:${args.port}`, sshOpts: ["-o", "StrictHostKeyChecking=accept-new"] },
      { parent: this, dependsOn: [installDocker] },
    );
    this.registerOutputs({ publicAddress: this.publicAddress });
  }
}
