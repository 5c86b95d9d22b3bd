/**
 * What a further host must let in, read from the ports its containers publish: the p2p ports
 * (published on every interface) from anywhere, the RPC and check ports (published on its private
 * address) from the stack's host only, whose gateway and readiness service reach them. An `aws`
 * further host's security group is built from it. Pure.
 */
import type { StackSettings } from "../config/index.js";
import type { StackServices } from "../services/index.js";
import { buildServices, nodesOn, type ServiceSpec } from "../services/index.js";
import { gatewayHosting } from "./gatewayHosting.js";

export interface Ingress {
  readonly port: number;
  readonly protocol: "tcp" | "udp";
  readonly why: string;
  /** Where from: undefined for anywhere. */
  readonly from?: string;
}

/** The containers that run on a further host: its nodes' and its disk watcher. */
export function hostServices(services: StackServices, host: string): ServiceSpec[] {
  const nodes = nodesOn(services.nodes, host).flatMap((n) => Object.values(n.role.services)).filter((s): s is ServiceSpec => !!s && !s.name.startsWith("rollout-"));
  const own = services.hosts.find((h) => h.host === host)?.services.diskWatch;
  return [...nodes, ...(own ? [own] : [])];
}

export function furtherHostIngress(settings: StackSettings, host: string, services: StackServices = buildServices(settings, gatewayHosting())): Ingress[] {
  const gateway = settings.host.privateAddress;
  const seen = new Set<string>();
  return hostServices(services, host).flatMap((s) =>
    s.ports.flatMap((p): Ingress[] => {
      if (!p.publish) return [];
      const key = `${p.publish.port}/${p.protocol}`;
      if (seen.has(key)) return [];
      seen.add(key);
      const why = `${s.name} ${p.purpose}`;
      return p.publish.address === "0.0.0.0" ? [{ port: p.publish.port, protocol: p.protocol, why }] : [{ port: p.publish.port, protocol: p.protocol, why, from: gateway }];
    }),
  );
}
