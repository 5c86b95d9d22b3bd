/**
 * What a Starknet developer does first against a node, with starknet.js 10 (npm's newest major) or
 * starknet-py (starknet_py_journey.py), through the gateway: chain id, block number, a new account
 * funded and deployed from one of Devnet's predeployed accounts, a transfer that lands, and the
 * block that holds it, with its transactions.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Account, CallData, RpcProvider, cairo, ec, hash, stark } from "starknet10";
import { clientBinary } from "../../devtools/clients.js";
import { jsonRpc } from "../../devtools/net.js";
import { tlsFetch } from "./client.js";

/** Devnet's STRK fee token (its predeployed ERC-20; the same address as on Starknet). */
export const STRK_TOKEN = "0x04718f5a0fc34cc1af16a1cdee98ffb20c31f5cd61d6ab07201858f4287c938d";

export interface Predeployed {
  readonly address: string;
  readonly private_key: string;
  readonly public_key: string;
}

/** Devnet's predeployed, funded accounts, asked of the node itself (the gateway refuses devnet_ calls). */
export const predeployedAccounts = (devnetUrl: string): Promise<Predeployed[]> => jsonRpc(devnetUrl, "devnet_getPredeployedAccounts");

export interface Journey {
  readonly specVersion: string;
  readonly chainId: string;
  readonly blockNumber: number;
  /** The new account, deployed with its class hash taken from the funder's. */
  readonly deployed: { readonly address: string; readonly classHash: string; readonly status: string };
  /** `received`: what the recipient's STRK balance gained across the transfer (the new account paid the fee). */
  readonly transfer: { readonly hash: string; readonly status: string; readonly blockNumber: number; readonly inBlock: boolean; readonly received: string };
}

export const AMOUNT = 10n ** 18n;

/** The journey with starknet.js 10 at `nodeUrl` (a gateway path), trusting the gateway's CA. */
export async function starknetJsJourney(nodeUrl: string, ca: string, funder: Predeployed): Promise<Journey> {
  const provider = await RpcProvider.create({ nodeUrl, baseFetch: tlsFetch(ca) as typeof fetch });
  const account = new Account({ provider, address: funder.address, signer: funder.private_key });
  const classHash = await provider.getClassHashAt(funder.address);
  // A new account of the same class: its address is known before it exists, and is funded first.
  const privateKey = stark.randomAddress();
  const publicKey = ec.starkCurve.getStarkKey(privateKey);
  const constructorCalldata = CallData.compile({ publicKey });
  const address = hash.calculateContractAddressFromHash(publicKey, classHash, constructorCalldata, 0);
  const fund = await account.execute({ contractAddress: STRK_TOKEN, entrypoint: "transfer", calldata: CallData.compile({ recipient: address, amount: cairo.uint256(10n * AMOUNT) }) });
  await provider.waitForTransaction(fund.transaction_hash);
  const fresh = new Account({ provider, address, signer: privateKey });
  const deploy = await fresh.deployAccount({ classHash, constructorCalldata, addressSalt: publicKey });
  const deployReceipt = await provider.waitForTransaction(deploy.transaction_hash);
  // The transfer: from the new account back to the funder.
  const balance = async () => {
    // The pre-confirmed state holds every transaction so far: between the two reads only the transfer touches it.
    const [low, high] = await provider.callContract({ contractAddress: STRK_TOKEN, entrypoint: "balanceOf", calldata: [funder.address] }, "pre_confirmed");
    return BigInt(low) + (BigInt(high) << 128n);
  };
  const before = await balance();
  const sent = await fresh.execute({ contractAddress: STRK_TOKEN, entrypoint: "transfer", calldata: CallData.compile({ recipient: funder.address, amount: cairo.uint256(AMOUNT) }) });
  const receipt = (await provider.waitForTransaction(sent.transaction_hash)) as { execution_status?: string; block_number?: number };
  const block = await provider.getBlockWithTxs(receipt.block_number!);
  const received = (await balance()) - before;
  return {
    specVersion: await provider.getSpecVersion(),
    chainId: await provider.getChainId(),
    blockNumber: await provider.getBlockNumber(),
    deployed: { address: deploy.contract_address, classHash: await provider.getClassHashAt(address), status: (deployReceipt as { execution_status?: string }).execution_status ?? "" },
    transfer: {
      hash: sent.transaction_hash,
      status: receipt.execution_status ?? "",
      blockNumber: receipt.block_number!,
      inBlock: block.transactions.some((t) => BigInt((t as { transaction_hash: string }).transaction_hash) === BigInt(sent.transaction_hash)),
      received: received.toString(),
    },
  };
}

/** The same journey with starknet-py (test/e2e/starknet_py_journey.py), in the venv scripts/clients/build.sh makes. */
export function starknetPyJourney(nodeUrl: string, ca: string, funder: Predeployed): Journey {
  const python = clientBinary("starknet-py");
  const dir = mkdtempSync(join(tmpdir(), "rpcstack-starknet-py-"));
  writeFileSync(join(dir, "ca.pem"), ca);
  const r = spawnSync(python, [join(__dirname, "starknet_py_journey.py"), nodeUrl, funder.address, funder.private_key], {
    encoding: "utf8",
    timeout: 240_000,
    // aiohttp verifies with Python's default context, which reads this file.
    env: { ...process.env, SSL_CERT_FILE: join(dir, "ca.pem") },
  });
  rmSync(dir, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`starknet-py journey exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Journey;
}
