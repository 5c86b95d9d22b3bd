import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { DOCKER_NETWORK, type ServiceGroup } from "../services/index.js";
import { createContainers, createVolumes } from "./dockerServices.js";

export interface L1NodeArgs {
  /** The L1 service group from services/ (JWT init, geth, Lighthouse) and its volumes. */
  readonly services: ServiceGroup;
  /** Docker provider of the host the node runs on. */
  readonly provider: docker.Provider;
  /** In-network URLs of the execution client, from services/. */
  readonly urls: { readonly rpcHttp: string; readonly rpcWs: string };
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
    const volumes = createVolumes(ctx, args.services.volumes);
    const containers = createContainers(ctx, args.services.services, volumes);
    this.networkName = network.name;
    this.rpcHttpUrl = pulumi.output(args.urls.rpcHttp);
    this.rpcWsUrl = pulumi.output(args.urls.rpcWs);
    this.executionContainer = containers.get("geth");
    this.containers = [...containers.values()];
    this.volumes = volumes;
    this.registerOutputs({ networkName: this.networkName, rpcHttpUrl: this.rpcHttpUrl, rpcWsUrl: this.rpcWsUrl });
  }
}
