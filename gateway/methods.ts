/**
 * What the gateway knows about JSON-RPC methods by name, per chain kind: which are reads (a call a
 * second node may answer again after the first failed), which open a subscription, which create
 * a filter on the node. One source for the native rules (HAProxy ACLs) and the Lua programs
 * (gateway_data.lua), so a single call, a batch and a WebSocket message are judged alike. Pure.
 */
import type { ChainKind } from "./types.js";

/**
 * Methods known to be reads: they change nothing on the chain or the node, so a call whose node
 * failed before answering may be sent to another. Anything else, whatever its name (a send, a
 * bundle, a private transaction, a method the gateway has never heard of), is sent at most once.
 * Matched ignoring case, as the method policy matches.
 * - evm: every `eth_` method of ethereum/execution-apis src/eth/*.yaml (checked at 033ca6e,
 *   2026-08) but submit.yaml (sends), sign.yaml (node-held keys) and the filter calls of
 *   filter.yaml but eth_getLogs (a filter id is the node's own: another node does not know it, and
 *   eth_getFilterChanges moves the filter on); net_version (client.yaml), and geth's other net_
 *   and web3_ reads (internal/ethapi NetAPI, node/api.go web3API).
 * - starknet: the read API, the trace API and the executables API of starkware-libs/starknet-specs
 *   (api/starknet_api_openrpc.json, starknet_trace_api_openrpc.json, starknet_executables.json),
 *   the same at v0.8.1, v0.9.0 and v0.10.0: the spec versions the pinned Juno (v0.17.0) and
 *   Pathfinder (v0.24.1) serve. Not the write API (starknet_add*Transaction).
 * - cosmos: CometBFT's RPC routes (rpc/core/routes.go, checked at 5bba72c) but the broadcast_*
 *   sends, the WebSocket-only subscribe calls and the unsafe routes. check_tx runs the app's
 *   CheckTx without adding to the mempool.
 */
export const READ_METHODS: Record<ChainKind, readonly string[]> = {
  evm: [
    "eth_getBlockByHash", "eth_getBlockByNumber", "eth_getBlockTransactionCountByHash", "eth_getBlockTransactionCountByNumber", "eth_getBlockReceipts", "eth_getBlockAccessList",
    "eth_capabilities", "eth_chainId", "eth_syncing", "eth_coinbase", "eth_accounts", "eth_blockNumber", "eth_config",
    "eth_call", "eth_estimateGas", "eth_createAccessList", "eth_simulateV1", "eth_fillTransaction",
    "eth_gasPrice", "eth_baseFee", "eth_blobBaseFee", "eth_maxPriorityFeePerGas", "eth_feeHistory",
    "eth_getLogs",
    "eth_getBalance", "eth_getStorageAt", "eth_getStorageValues", "eth_getTransactionCount", "eth_getCode", "eth_getProof",
    "eth_getTransactionByHash", "eth_getTransactionByBlockHashAndIndex", "eth_getTransactionByBlockNumberAndIndex", "eth_getTransactionReceipt",
    "net_version", "net_listening", "net_peerCount", "web3_clientVersion", "web3_sha3",
  ],
  starknet: [
    "starknet_specVersion", "starknet_getBlockWithTxHashes", "starknet_getBlockWithTxs", "starknet_getBlockWithReceipts", "starknet_getStateUpdate",
    "starknet_getStorageAt", "starknet_getTransactionStatus", "starknet_getMessagesStatus", "starknet_getTransactionByHash",
    "starknet_getTransactionByBlockIdAndIndex", "starknet_getTransactionReceipt", "starknet_getClass", "starknet_getClassHashAt", "starknet_getClassAt",
    "starknet_getBlockTransactionCount", "starknet_call", "starknet_estimateFee", "starknet_estimateMessageFee", "starknet_blockNumber",
    "starknet_blockHashAndNumber", "starknet_chainId", "starknet_syncing", "starknet_getEvents", "starknet_getNonce", "starknet_getStorageProof",
    "starknet_traceTransaction", "starknet_simulateTransactions", "starknet_traceBlockTransactions", "starknet_getCompiledCasm",
  ],
  cosmos: [
    "health", "status", "net_info", "blockchain", "genesis", "genesis_chunked", "block", "block_by_hash", "block_results", "commit", "header",
    "header_by_hash", "check_tx", "tx", "tx_search", "block_search", "validators", "dump_consensus_state", "consensus_state", "consensus_params",
    "unconfirmed_txs", "num_unconfirmed_txs", "abci_query", "abci_info",
  ],
};

/**
 * Cosmos gRPC methods that submit (cosmos-sdk proto/cosmos/tx/v1beta1/service.proto): every other
 * method of an SDK app's gRPC services is a query.
 */
export const GRPC_SENDS = ["/cosmos.tx.v1beta1.Service/BroadcastTx"] as const;

/** A chain kind's reads as policy.lua looks them up: a set of lower-cased names. */
export const readSet = (kind: ChainKind): Record<string, true> => Object.fromEntries(READ_METHODS[kind].map((m) => [m.toLowerCase(), true]));

/**
 * Which calls open a subscription over a WebSocket, on every chain kind: the lower-cased method
 * name contains `opens` and not `closes`. So eth_subscribe (evm); starknet_subscribeNewHeads,
 * ...Events, ...TransactionStatus, ...NewTransactions, ...NewTransactionReceipts (starknet-specs
 * starknet_ws_api.json 0.8 to 0.10), and whatever a node adds under its own namespace
 * (juno_subscribe*, pathfinder_subscribe); Tendermint's subscribe (cosmos). starknet_unsubscribe,
 * eth_unsubscribe, unsubscribe and unsubscribe_all close one and are not counted.
 */
export const SUBSCRIPTION = { opens: "subscribe", closes: "unsubscribe" } as const;

/**
 * Which calls create a filter on the node, per chain kind: a lower-cased method name matching
 * this pattern, read alike as a Lua pattern (ws.lua, filters.lua) and as an HAProxy regex (-i).
 * evm: geth's filter API (eth/filters/api.go: NewFilter, NewBlockFilter,
 * NewPendingTransactionFilter, so eth_newFilter, eth_newBlockFilter,
 * eth_newPendingTransactionFilter), and the same shape under any namespace. Starknet and
 * Tendermint have no filters.
 */
export const FILTER_CREATOR: Record<ChainKind, string | undefined> = { evm: "^[^_]+_new.*filter$", starknet: undefined, cosmos: undefined };

/**
 * How long geth keeps a filter nobody polls (eth/filters/filter_system.go, Config.Timeout: 5
 * minutes): the window the gateway counts filter creations over.
 */
export const FILTER_WINDOW_S = 300;
