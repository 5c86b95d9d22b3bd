// SPDX-License-Identifier: MIT
// The bench chain's ERC-20 (bench/chain.ts): OpenZeppelin's, so its transfers cost and log what a
// mainnet token's do. The whole supply goes to the deployer, who pays it out to the holders.
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

contract BenchToken is ERC20 {
    constructor(uint256 supply) ERC20("Bench Token", "BENCH") {
        _mint(msg.sender, supply);
    }
}
