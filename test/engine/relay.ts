/**
 * One relay per chain through a deployed devnet gateway with the clients developers use: ethers
 * for ETHDEV, starknet.js for STRKDEV. Run in its own process so NODE_EXTRA_CA_CERTS (the gateway's
 * self-signed certificate) applies to it; prints one JSON line.
 * usage: tsx test/engine/relay.ts BASE_URL KEY
 */
import { FetchRequest, JsonRpcProvider } from "ethers";
import { RpcProvider } from "starknet";

async function main() {
  const [base, key] = process.argv.slice(2);
  if (!base || !key) throw new Error("usage: tsx test/engine/relay.ts BASE_URL KEY");
  const eth = new JsonRpcProvider(new FetchRequest(`${base}/gateway/ethdev/rpc-http/${key}`), undefined, { staticNetwork: true });
  const strk = new RpcProvider({ nodeUrl: `${base}/gateway/strkdev/rpc-http/${key}` });
  const out = {
    ethChainId: Number((await eth.getNetwork()).chainId),
    ethBlock: await eth.getBlockNumber(),
    strkChainId: await strk.getChainId(),
    strkBlock: await strk.getBlockNumber(),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((e) => {
  process.stderr.write(`relay: ${(e as Error).stack ?? e}\n`);
  process.exit(1);
});
