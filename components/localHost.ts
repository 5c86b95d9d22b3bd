import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { Host } from "./host.js";

/**
 * The Docker daemon of the machine running `pulumi up` (DOCKER_HOST, else the default socket). Its
 * preflight (components/preflight.ts) ran before the program registered anything.
 */
export class LocalHost extends pulumi.ComponentResource implements Host {
  readonly publicAddress: pulumi.Output<string>;
  readonly dockerProvider: docker.Provider;

  constructor(name: string, args: Record<string, never>, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:LocalHost", name, {}, opts);
    this.publicAddress = pulumi.output("127.0.0.1");
    this.dockerProvider = new docker.Provider(`${name}-docker`, { host: process.env.DOCKER_HOST ?? "unix:///var/run/docker.sock" }, { parent: this });
    this.registerOutputs({ publicAddress: this.publicAddress });
  }
}
