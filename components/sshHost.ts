import * as command from "@pulumi/command";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { INSTALL_DOCKER_SCRIPT, SSH_OPTIONS } from "../hosts/preflight.js";
import type { Host } from "./host.js";

export interface SshHostArgs {
  readonly address: string;
  readonly user: string;
  readonly port: number;
  /** Private key for `user` (a Pulumi secret). */
  readonly privateKey: pulumi.Input<string>;
}

/**
 * An existing server over SSH; Docker is installed from the distribution's packages when missing.
 *
 * The Docker provider reaches the server with the ssh client of the machine running Pulumi (it has
 * no key input of its own), so that client must hold the key: an ssh agent with it added, or the
 * ssh config. The preflight (components/preflight.ts) runs through the same client before the
 * program registers anything, so a missing key or a server below the tier stops `pulumi up` there.
 */
export class SshHost extends pulumi.ComponentResource implements Host {
  readonly publicAddress: pulumi.Output<string>;
  readonly dockerProvider: docker.Provider;

  constructor(name: string, args: SshHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:SshHost", name, {}, opts);
    const connection = { host: args.address, port: args.port, user: args.user, privateKey: pulumi.secret(args.privateKey) };
    const installDocker = new command.remote.Command(`${name}-install-docker`, { connection, create: INSTALL_DOCKER_SCRIPT }, { parent: this });
    this.publicAddress = pulumi.output(args.address);
    this.dockerProvider = new docker.Provider(
      `${name}-docker`,
      { host: `ssh://${args.user}@${args.address}:${args.port}`, sshOpts: [...SSH_OPTIONS] },
      { parent: this, dependsOn: [installDocker] },
    );
    this.registerOutputs({ publicAddress: this.publicAddress });
  }
}
