/** How each chain kind reports its head: the call the health checks, the smoke test and the summary make. */
import type { ChainKind } from "../config/index.js";

/** The JSON-RPC method that returns the head, per chain kind (Tendermint's `status` for Cosmos). */
export const HEAD_METHOD = { evm: "eth_blockNumber", starknet: "starknet_blockNumber", cosmos: "status" } as const satisfies Record<ChainKind, string>;

/** The JSON-RPC request body that asks a node of this kind for its head. */
export const headProbe = (kind: ChainKind) => JSON.stringify({ jsonrpc: "2.0", method: HEAD_METHOD[kind], params: [], id: 1 });
