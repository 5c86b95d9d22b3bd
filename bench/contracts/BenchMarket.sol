// SPDX-License-Identifier: MIT
// The bench chain's contract calls (bench/chain.ts): a trade as a DEX logs it, reserves of a pair
// written and a Trade event indexed by trader and pair, so that eth_getLogs by topic finds a
// dapp's own events among a block's, as it does on mainnet.
pragma solidity ^0.8.20;

contract BenchMarket {
    struct Reserves {
        uint128 base;
        uint128 quote;
    }

    mapping(uint256 => Reserves) public reserves;
    mapping(address => uint256) public trades;

    event Trade(address indexed trader, uint256 indexed pair, uint256 amountIn, uint256 amountOut);

    function trade(uint256 pair, uint128 amountIn) external returns (uint256 amountOut) {
        Reserves storage r = reserves[pair];
        if (r.base == 0) {
            r.base = 1e24;
            r.quote = 1e24;
        }
        amountOut = (uint256(amountIn) * r.quote) / (uint256(r.base) + amountIn);
        r.base += amountIn;
        r.quote -= uint128(amountOut);
        trades[msg.sender] += 1;
        emit Trade(msg.sender, pair, amountIn, amountOut);
    }
}
