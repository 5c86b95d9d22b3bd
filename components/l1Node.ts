import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import { DOCKER_NETWORK, type L1Role } from "../services/index.js";
import { createContainers, createVolumes, type DockerTarget } from "./dockerServices.js";

/** The first L1 node of a host creates the host's private network, so it takes only the host's Docker provider. */
export interface L1NodeArgs extends Pick<DockerTarget, "provider"> {
  /** The L1 role from services/: JWT init, execution and consensus client, volumes, in-network URLs (its rollout step runs elsewhere: RolloutStep). */
  readonly role: L1Role;
  /** The host's network, when another node created it; absent: this node creates it. */
  readonly networkName?: pulumi.Input<string>;
  /** Containers of other nodes (and rollout steps) this node's specs name. */
  readonly known?: ReadonlyMap<string, pulumi.Input<pulumi.Resource>>;
  /** What every resource of this node waits for: the previous node's rollout step, once it passed. */
  readonly after?: pulumi.Input<pulumi.Resource>[];
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
  /** Its containers by service name (geth-2, lighthouse-2): what other nodes' specs name. */
  readonly byService: ReadonlyMap<string, docker.Container>;
  /** Data volumes by spec key (geth, lighthouse, jwt): the disk watcher mounts them read-only. */
  readonly volumes: ReadonlyMap<string, docker.Volume>;

  constructor(name: string, args: L1NodeArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:L1Node", name, {}, opts);
    const networkName =
      args.networkName ??
      new docker.Network(
        `${name}-network`,
        { name: DOCKER_NETWORK, driver: "bridge", labels: [{ label: "rpcstack.purpose", value: "private network of the rpcstack services" }] },
        { parent: this, provider: args.provider },
      ).name;
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName, known: args.known, dependsOn: args.after };
    const volumes = createVolumes(ctx, args.role.volumes);
    const { rollout: _step, ...services } = args.role.services;
    const containers = createContainers(ctx, services, volumes);
    this.networkName = pulumi.output(networkName);
    this.rpcHttpUrl = pulumi.output(args.role.urls.rpcHttp);
    this.rpcWsUrl = pulumi.output(args.role.urls.rpcWs);
    this.executionContainer = containers.execution;
    this.containers = [containers.jwtInit, containers.execution, containers.consensus].filter((c): c is docker.Container => c !== undefined);
    this.byService = new Map(Object.entries(services).flatMap(([role, svc]) => (svc ? [[svc.name, (containers as Record<string, docker.Container>)[role]] as const] : [])));
    this.volumes = volumes;
    this.registerOutputs({ networkName: this.networkName, rpcHttpUrl: this.rpcHttpUrl, rpcWsUrl: this.rpcWsUrl });
  }
}
