/**
 * Names, ports and addresses of one node among several (config/placement.ts NodeSlot): the first
 * node of a layer keeps the names a single node always had; the others take a suffix (geth-2) on
 * their services, containers and volumes, and the k-th on one host moves the ports it publishes
 * by k × 100. A node on a further host publishes its RPC ports on that host's private address, where
 * the gateway's host reaches it. Pure.
 */
import { MAIN_HOST, type NodeSlot, type StackSettings } from "../config/index.js";
import type { PortSpec } from "./types.js";

export const FIRST: Readonly<Record<"l1" | "l2", NodeSlot>> = {
  l1: { layer: "l1", index: 0, suffix: "", host: MAIN_HOST, portOffset: 0 },
  l2: { layer: "l2", index: 0, suffix: "", host: MAIN_HOST, portOffset: 0 },
};

/** `geth` -> `geth-2` for the second node. */
export const named = (base: string, slot: NodeSlot) => `${base}${slot.suffix}`;

const remoteAddress = (s: Pick<StackSettings, "hosts">, slot: NodeSlot): string | undefined => (slot.host === MAIN_HOST ? undefined : s.hosts[slot.host].privateAddress);

/**
 * An RPC port published where the gateway's host reaches it: on loopback on the stack's own host
 * (the operator guide's `curl localhost:8545` check), on the private address on a further host.
 */
export const rpcPort = (s: Pick<StackSettings, "hosts">, slot: NodeSlot, container: number, purpose: "rpc" | "ws"): PortSpec => ({
  container,
  protocol: "tcp",
  purpose,
  publish: { address: remoteAddress(s, slot) ?? "127.0.0.1", port: container + slot.portOffset },
});

/** A port other hosts never need: published on a further host's private address when `always`, else not at all. */
export const privatePort = (s: Pick<StackSettings, "hosts">, slot: NodeSlot, container: number, purpose: "ws" | "metrics" | "health"): PortSpec => {
  const address = remoteAddress(s, slot);
  return address ? { container, protocol: "tcp", purpose, publish: { address, port: container + slot.portOffset } } : { container, protocol: "tcp", purpose };
};

/** How the gateway's host reaches a node's port: by service name on its own host, by private address and published port on a further one. */
export const reach = (s: Pick<StackSettings, "hosts">, slot: NodeSlot, service: string, container: number): string => {
  const address = remoteAddress(s, slot);
  return address ? `${address.includes(":") ? `[${address}]` : address}:${container + slot.portOffset}` : `${service}:${container}`;
};
