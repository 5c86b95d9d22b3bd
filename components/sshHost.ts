import * as command from "@pulumi/command";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { Tier } from "../config/index.js";
import { INSTALL_DOCKER_SCRIPT, PREFLIGHT_SCRIPT, SSH_OPTIONS, assertHostFits, sshPreflightCommand, sshProblem, type PreflightOptions } from "../hosts/preflight.js";
import type { Host } from "./host.js";

export interface SshHostArgs {
  readonly address: string;
  readonly user: string;
  readonly port: number;
  /** Private key for `user` (a Pulumi secret). */
  readonly privateKey: pulumi.Input<string>;
  readonly tier: Tier;
  /** What the gateway container needs of the daemon's open-file limit. */
  readonly gateway?: PreflightOptions["gateway"];
}

/**
 * An existing server over SSH. A preflight stops `pulumi up` when the server is smaller than the
 * tier; Docker is installed from the distribution's packages when missing.
 *
 * The Docker provider reaches the server with the ssh client of the machine running Pulumi (it has
 * no key input of its own), so that client must hold the key: an ssh agent with it added, or the
 * ssh config. The preflight runs through the same client on every preview and update, so a
 * missing key stops `pulumi up` at the preflight, naming the connection, before any container.
 */
export class SshHost extends pulumi.ComponentResource implements Host {
  readonly publicAddress: pulumi.Output<string>;
  readonly dockerProvider: docker.Provider;

  constructor(name: string, args: SshHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:SshHost", name, {}, opts);
    const connection = { host: args.address, port: args.port, user: args.user, privateKey: pulumi.secret(args.privateKey) };
    const label = `${args.user}@${args.address}:${args.port}`;
    // An invoke, not a resource: it runs on every preview and update (a server's disk fills
    // between deployments) and leaves nothing in the state to differ next time.
    const preflight = command.local.runOutput(
      { command: sshPreflightCommand(args.user, args.address, args.port), interpreter: ["/bin/sh", "-c"], stdin: PREFLIGHT_SCRIPT, logging: "none" },
      { parent: this },
    );
    const installDocker = new command.remote.Command(
      `${name}-install-docker`,
      {
        connection,
        // Only once the server is known to fit the tier.
        create: preflight.stdout.apply((out) => {
          const problem = sshProblem(out);
          if (problem) {
            throw new Error(
              `rpcstack: cannot reach ${label} with this machine's ssh client (${problem}). The Docker provider connects through the same client: ` +
                "give it the key (ssh-add, or an IdentityFile in ~/.ssh/config) and run pulumi up again.",
            );
          }
          assertHostFits(label, out, args.tier, { installsDocker: true, gateway: args.gateway });
          return INSTALL_DOCKER_SCRIPT;
        }),
      },
      { parent: this },
    );
    this.publicAddress = pulumi.output(args.address);
    this.dockerProvider = new docker.Provider(
      `${name}-docker`,
      { host: `ssh://${args.user}@${args.address}:${args.port}`, sshOpts: [...SSH_OPTIONS] },
      { parent: this, dependsOn: [installDocker] },
    );
    this.registerOutputs({ publicAddress: this.publicAddress });
  }
}
