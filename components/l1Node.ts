import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { DOCKER_NETWORK, type L1Role } from "../services/index.js";
import { createContainers, createVolumes, type DockerTarget } from "./dockerServices.js";

/** The L1 node creates the private network, so it takes only the host's Docker provider. */
export interface L1NodeArgs extends Pick<DockerTarget, "provider"> {
  /** The L1 role from services/: JWT init, execution and consensus client, volumes, in-network URLs. */
  readonly role: L1Role;
}

/** Ethereum L1 node: the private Docker network, data volumes, and the L1 containers. */
export class L1Node extends pulumi.ComponentResource {
  /** The private Docker network every service joins. */
  readonly networkName: pulumi.Output<string>;
  readonly rpcHttpUrl: pulumi.Output<string>;
  readonly rpcWsUrl: pulumi.Output<string>;
  /** The execution client's container: what sync checks and the gateway wait for; none with an external L1. */
  readonly executionContainer?: docker.Container;
  readonly containers: docker.Container[];
  /** Data volumes by spec key (geth, lighthouse, jwt): the disk watcher mounts them read-only. */
  readonly volumes: ReadonlyMap<string, docker.Volume>;

  constructor(name: string, args: L1NodeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:L1Node", name, {}, opts);
    const network = new docker.Network(
      `${name}-network`,
      { name: DOCKER_NETWORK, driver: "bridge", labels: [{ label: "rpcstack.purpose", value: "private network of the rpcstack services" }] },
      { parent: this, provider: args.provider },
    );
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: network.name };
    const volumes = createVolumes(ctx, args.role.volumes);
    const containers = createContainers(ctx, args.role.services, volumes);
    this.networkName = network.name;
    this.rpcHttpUrl = pulumi.output(args.role.urls.rpcHttp);
    this.rpcWsUrl = pulumi.output(args.role.urls.rpcWs);
    this.executionContainer = containers.execution;
    this.containers = [containers.jwtInit, containers.execution, containers.consensus].filter((c): c is docker.Container => c !== undefined);
    this.volumes = volumes;
    this.registerOutputs({ networkName: this.networkName, rpcHttpUrl: this.rpcHttpUrl, rpcWsUrl: this.rpcWsUrl });
  }
}
