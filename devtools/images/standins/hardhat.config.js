// The stand-in geth's EVM: a block every second, the chain id geth would report for its network.
module.exports = {
  networks: { hardhat: { mining: { auto: true, interval: 1000 }, chainId: Number(process.env.STANDIN_CHAIN_ID || 31337) } },
  paths: { cache: "/tmp/hardhat-cache", artifacts: "/tmp/hardhat-artifacts" },
};
