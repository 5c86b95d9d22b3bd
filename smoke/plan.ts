/** The post-deploy test relays: one per chain and interface, and how to read a block number from each. Pure. */
import type { GatewayChain } from "../gateway/build.js";

export type SmokeInterface = "rpc-http" | "rest" | "rpc";

export interface SmokeCheck {
  readonly chainId: string;
  readonly path: string;
  readonly iface: SmokeInterface;
  readonly kind: GatewayChain["kind"];
}

export function smokePlan(chains: readonly GatewayChain[]): SmokeCheck[] {
  return chains.flatMap((c) => {
    const base = { chainId: c.chainId, path: c.path, kind: c.kind };
    return [
      ...(c.upstreams.rpcHttp ? [{ ...base, iface: "rpc-http" as const }] : []),
      ...(c.upstreams.rest ? [{ ...base, iface: "rest" as const }] : []),
      ...(c.upstreams.rpcWs ? [{ ...base, iface: "rpc" as const }] : []),
    ];
  });
}

/** The JSON-RPC method that returns the head, per chain kind. */
export const HEAD_METHOD = { evm: "eth_blockNumber", starknet: "starknet_blockNumber", cosmos: "status" } as const;
export const COSMOS_LATEST_BLOCK = "/cosmos/base/tendermint/v1beta1/blocks/latest";

/** A block number out of whatever the head call returned; undefined when it holds none. */
export function headOf(kind: GatewayChain["kind"], iface: SmokeInterface, reply: any): number | undefined {
  const n = (v: unknown) => {
    const x = typeof v === "string" ? (v.startsWith("0x") ? Number.parseInt(v, 16) : Number(v)) : v;
    return typeof x === "number" && Number.isSafeInteger(x) && x >= 0 ? x : undefined;
  };
  if (kind === "cosmos") return iface === "rest" ? n(reply?.block?.header?.height) : n(reply?.sync_info?.latest_block_height);
  return n(reply);
}
