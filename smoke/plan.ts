/** The post-deploy test relays (planned in plan/views.ts) and how to read a block number from each. Pure. */
import type { ChainKind } from "../config/index.js";
import type { Interface } from "../gateway/types.js";

export { HEAD_METHOD } from "../gateway/heads.js";
export type SmokeInterface = Interface;

export interface SmokeCheck {
  readonly chainId: string;
  readonly path: string;
  readonly iface: SmokeInterface;
  readonly kind: ChainKind;
}

export const COSMOS_LATEST_BLOCK = "/cosmos/base/tendermint/v1beta1/blocks/latest";

/** A block number out of whatever the head call returned; undefined when it holds none. */
export function headOf(kind: ChainKind, iface: SmokeInterface, reply: any): number | undefined {
  const n = (v: unknown) => {
    const x = typeof v === "string" ? (v.startsWith("0x") ? Number.parseInt(v, 16) : Number(v)) : v;
    return typeof x === "number" && Number.isSafeInteger(x) && x >= 0 ? x : undefined;
  };
  if (kind === "cosmos") return iface === "rest" ? n(reply?.block?.header?.height) : n(reply?.sync_info?.latest_block_height);
  return n(reply);
}
