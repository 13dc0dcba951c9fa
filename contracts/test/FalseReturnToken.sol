// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {TestToken} from "./TestToken.sol";

/// @notice Old-style ERC-20 for tests: `transfer`/`transferFrom` return false
///         instead of reverting when balance/allowance is insufficient.
contract FalseReturnToken is TestToken {
    constructor(string memory name_, string memory symbol_, uint8 decimals_)
        TestToken(name_, symbol_, decimals_)
    {}

    function transfer(address to, uint256 amount) external override returns (bool) {
        if (balanceOf[msg.sender] < amount) return false;
        _transfer(msg.sender, to, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external override returns (bool) {
        if (balanceOf[from] < amount || allowance[from][msg.sender] < amount) return false;
        _spendAllowance(from, amount);
        _transfer(from, to, amount);
        return true;
    }
}
