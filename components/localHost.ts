import * as command from "@pulumi/command";
import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { Tier } from "../config/index.js";
import { PREFLIGHT_SCRIPT, assertHostFits, type PreflightOptions } from "../hosts/preflight.js";
import type { Host } from "./host.js";

export interface LocalHostArgs {
  readonly tier: Tier;
  /** What the gateway container needs of the daemon's open-file limit. */
  readonly gateway?: PreflightOptions["gateway"];
}

/** The Docker daemon of the machine running `pulumi up` (DOCKER_HOST, else the default socket). */
export class LocalHost extends pulumi.ComponentResource implements Host {
  readonly publicAddress: pulumi.Output<string>;
  readonly dockerProvider: docker.Provider;

  constructor(name: string, args: LocalHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:LocalHost", name, {}, opts);
    // An invoke, not a resource: it runs on every preview and update (a machine's free disk
    // changes between deployments) and leaves nothing in the state to differ next time.
    const preflight = command.local.runOutput({ command: PREFLIGHT_SCRIPT, interpreter: ["/bin/sh", "-c"], logging: "none" }, { parent: this });
    // The check throws inside the apply, which stops `pulumi up` before any container exists.
    const checked = preflight.stdout.apply((out) => assertHostFits("this machine", out, args.tier, { installsDocker: false, gateway: args.gateway }).dockerVersion);
    this.publicAddress = pulumi.output("127.0.0.1");
    this.dockerProvider = new docker.Provider(`${name}-docker`, { host: checked.apply(() => process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock") }, { parent: this });
    this.registerOutputs({ publicAddress: this.publicAddress });
  }
}
