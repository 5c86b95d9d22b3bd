import * as docker from "@pulumi/docker";
import * as pulumi from "@pulumi/pulumi";
import type { L1Endpoint, ProjectKey, StackSettings } from "../config/index.js";
import { buildGateway } from "../gateway/build.js";
import { gatewayChains } from "../gateway/chains.js";
import { gatewayOptions, gatewayServices } from "../services/index.js";
import { createContainers, createVolumes } from "./dockerServices.js";

export interface GatewayArgs {
  readonly settings: StackSettings;
  /** Project keys (a Pulumi secret): they end up in HAProxy's key map. */
  readonly projectKeys: pulumi.Input<readonly ProjectKey[]>;
  readonly provider: docker.Provider;
  readonly networkName: pulumi.Input<string>;
  /** The readiness step: the gateway's routes open only after it. */
  readonly readiness: pulumi.Resource;
  /** Where the gateway is reached from the internet, for the endpoint outputs. */
  readonly publicAddress: pulumi.Input<string>;
  /** An external L1's URLs (a Pulumi secret): the L1 route relays there. */
  readonly l1Endpoint?: pulumi.Input<L1Endpoint>;
}

export interface ChainEndpoints {
  readonly chainId: string;
  /** URLs with `<KEY>` standing for a project key. */
  readonly endpoints: Readonly<Record<string, string>>;
}

/** What users call, per chain and interface (no key in it). */
export function publicEndpoints(settings: StackSettings, host: string): Record<string, ChainEndpoints> {
  const out: Record<string, ChainEndpoints> = {};
  for (const c of gatewayChains(settings)) {
    const e: Record<string, string> = {};
    const base = `https://${host}/gateway/${c.path}`;
    if (c.upstreams.rpcHttp) e.rpcHttp = `${base}/rpc-http/<KEY>`;
    if (c.upstreams.rpcHttp && c.kind === "cosmos") e.tendermintUri = `${base}/rpc-http/<KEY>/status`;
    if (c.upstreams.rest) e.rest = `${base}/rest/<KEY>/<rest_path>`;
    if (c.upstreams.rpcWs) e.rpcWs = `wss://${host}/gateway/${c.path}/rpc/<KEY>?secret=null`;
    if (c.hostnames?.tendermintRpc) (e.tendermintRpc = `https://${c.hostnames.tendermintRpc}`), (e.tendermintWs = `wss://${c.hostnames.tendermintRpc}/websocket`);
    if (c.hostnames?.rest) e.restHost = `https://${c.hostnames.rest}`;
    if (c.hostnames?.grpc) e.grpc = `${c.hostnames.grpc}:443`;
    out[c.path] = { chainId: c.chainId, endpoints: e };
  }
  return out;
}

/**
 * The TLS gateway on 443: HAProxy (official image) with the generated configuration and key
 * map uploaded as secrets, a certificate volume, the ACME client for public stacks (a
 * self-signed certificate on the local stack), opening after the readiness step.
 */
export class Gateway extends pulumi.ComponentResource {
  readonly endpoints: pulumi.Output<Record<string, ChainEndpoints>>;
  readonly containerName: pulumi.Output<string>;
  /** The HAProxy container: what post-deploy checks wait for. */
  readonly container: docker.Container;

  constructor(name: string, args: GatewayArgs, opts?: pulumi.ComponentResourceOptions) {
    super("rpcstack:index:Gateway", name, {}, opts);
    const s = args.settings;
    const group = gatewayServices(s);
    const options = gatewayOptions(s);
    const generated = pulumi.secret(
      pulumi.all([args.projectKeys, args.l1Endpoint]).apply(([keys, l1]): Record<string, string> => {
        const build = buildGateway(gatewayChains(s, l1), keys, options);
        return { "haproxy.cfg": build.config, ...build.files };
      }),
    );
    const ctx = { parent: this, prefix: name, provider: args.provider, networkName: args.networkName, dependsOn: [args.readiness], generated };
    const volumes = createVolumes(ctx, group.volumes);
    const containers = createContainers(ctx, group.services, volumes);
    this.container = containers.get("haproxy")!;
    this.containerName = this.container.name;
    const host = s.gateway.domain ?? "localhost";
    this.endpoints = pulumi.output(publicEndpoints(s, host));
    this.registerOutputs({ endpoints: this.endpoints, containerName: this.containerName, publicAddress: args.publicAddress });
  }
}
