// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev Minimal slice of the ERC-20 interface used for the payment call. The
///      declared `bool` return is only used to build calldata; the return data
///      is validated by hand so that tokens which return nothing (USDT) work.
interface IERC20TransferFrom {
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @title ChainGate PaymentGateway
/// @notice Stateless, non-custodial payment router. Every payment is forwarded
///         to the immutable `treasury` in the same call and tagged with an
///         `externalId` so the off-chain indexer can match it to an invoice.
/// @dev    Security properties:
///         - The contract never holds funds: native value is forwarded in full
///           within `pay`, ERC-20 tokens move payer -> treasury directly via
///           `transferFrom` and never touch this contract's balance.
///         - There is no owner/admin, no upgrade path, no `receive`/`fallback`
///           and no function that can move anybody else's funds: `pay` only
///           spends what `msg.sender` sends or has approved, and only ever to
///           `treasury`.
///         - There is no storage at all, so re-entering `pay` (from the
///           treasury or a token) cannot corrupt anything. Checks-effects-
///           interactions is still followed: all checks, then the event, then
///           the single external call.
contract PaymentGateway {
    /// @notice Recipient of every payment. Fixed at deployment.
    address public immutable treasury;

    /// @notice Emitted once per successful payment.
    /// @param externalId Merchant/invoice reference supplied by the payer's checkout.
    /// @param payer      `msg.sender` of the `pay` call.
    /// @param token      ERC-20 address, or address(0) for the chain's native coin.
    /// @param amount     Amount in the token's smallest unit (wei for native).
    event PaymentReceived(
        bytes32 indexed externalId,
        address indexed payer,
        address indexed token,
        uint256 amount
    );

    /// @notice The constructor was given address(0) as treasury.
    error ZeroTreasury();
    /// @notice `amount` was zero.
    error ZeroAmount();
    /// @notice Native payment whose `msg.value` differs from `amount`.
    error IncorrectNativeValue(uint256 expected, uint256 received);
    /// @notice Native value was attached to an ERC-20 payment.
    error UnexpectedNativeValue(uint256 received);
    /// @notice `token` is not a contract (EOA or not deployed).
    error TokenHasNoCode(address token);
    /// @notice Forwarding the native value to the treasury failed.
    error NativeTransferFailed(bytes returnData);
    /// @notice The token's `transferFrom` reverted (returnData is its revert
    ///         data, e.g. insufficient allowance/balance) or returned false /
    ///         malformed data.
    error TokenTransferFailed(address token, bytes returnData);

    constructor(address treasury_) {
        if (treasury_ == address(0)) revert ZeroTreasury();
        treasury = treasury_;
    }

    /// @notice Pay `amount` of `token` (address(0) = native coin) to the treasury.
    /// @dev Native: `msg.value` must equal `amount`.
    ///      ERC-20: `msg.value` must be 0 and this contract must be approved
    ///      for at least `amount` by `msg.sender`.
    function pay(bytes32 externalId, address token, uint256 amount) external payable {
        // ---- checks ----
        if (amount == 0) revert ZeroAmount();
        if (token == address(0)) {
            if (msg.value != amount) revert IncorrectNativeValue(amount, msg.value);
        } else {
            if (msg.value != 0) revert UnexpectedNativeValue(msg.value);
            if (token.code.length == 0) revert TokenHasNoCode(token);
        }

        // ---- effects (no storage; the event is the only effect) ----
        emit PaymentReceived(externalId, msg.sender, token, amount);

        // ---- interactions ----
        if (token == address(0)) {
            (bool ok, bytes memory ret) = treasury.call{value: msg.value}("");
            if (!ok) revert NativeTransferFailed(ret);
        } else {
            (bool ok, bytes memory ret) = token.call(
                abi.encodeCall(IERC20TransferFrom.transferFrom, (msg.sender, treasury, amount))
            );
            // Accept: empty return data (USDT-style) or a first word equal to 1 (true).
            if (!ok || (ret.length != 0 && (ret.length < 32 || _firstWord(ret) != 1))) {
                revert TokenTransferFailed(token, ret);
            }
        }
    }

    function _firstWord(bytes memory data) private pure returns (uint256 word) {
        assembly ("memory-safe") {
            word := mload(add(data, 32))
        }
    }
}
