// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title chaingate deposit sweeper (EIP-7702 delegation target)
/// @notice A deposit address (an EOA whose key stays offline) delegates to this code with an
///         EIP-7702 authorization and signs one EIP-712 `Sweep` intent: "send my whole balance of
///         these tokens, and of the native coin, to `to`, before `deadline`". Anyone may then
///         execute the intent (the merchant's fee payer does, for many deposits in one
///         transaction through `sweepMany`), and the deposit itself needs no gas. docs/sweeps/evm.md.
///
///         No storage, no owner, no constructor arguments, no upgrade path: the same bytecode at
///         the same CREATE2 address on every chain, and nothing here can be changed by anyone.
///
/// Attacks considered:
///  - Front-running a published intent: whoever executes it, the funds go to the `to` the deposit
///    signed for; an executor gains nothing but paying the gas.
///  - Replay on another chain: the EIP-712 domain holds block.chainid, so a signature made for
///    one chain recovers to another address elsewhere and is refused.
///  - Replay on the same chain, later: with no storage there is no nonce; the `deadline` bounds the
///    window, and within it a replay can only send what the deposit holds to the same destination
///    again (late funds reaching cold storage early, never elsewhere).
///  - Replay for another deposit: the domain's verifyingContract is address(this), the deposit,
///    and the signature must recover to address(this) itself.
///  - Signature malleability: `s` in the upper half of the curve order and `v` other than 27/28 are
///    refused, as is ecrecover's address(0) for invalid signatures.
///  - Calling this contract at its own address (not as a delegate): address(this) is then the
///    sweeper, whose key nobody has, so no signature recovers to it; it holds nothing anyway and
///    refuses native coins sent to it by mistake.
///  - A later re-delegation: only the deposit's key can sign an authorization; while delegated
///    here, the account can only move funds where its own key signs for.
///  - Leftover delegation: after a sweep the deposit stays delegated here (clearing it would cost
///    a second authorization per deposit in a second transaction). It still receives native
///    coins (`receive`) and tokens, and only its own signed intents can move them; the next plan's
///    sweep reuses the delegation without a new authorization.
///  - Tokens that return no bool (USDT) or return false instead of reverting: both handled; a
///    failed transfer reverts the whole sweep, so a transaction never half-sweeps a deposit.
contract Sweeper {
    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant NAME_HASH = keccak256("chaingate Sweeper");
    bytes32 private constant VERSION_HASH = keccak256("1");
    bytes32 private constant SWEEP_TYPEHASH = keccak256("Sweep(address to,address[] tokens,uint256 deadline)");
    /// secp256k1 order / 2: the upper bound of a canonical `s` (EIP-2).
    uint256 private constant HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// The sweeper's own address, in code (immutable), to tell a direct call from a delegated one.
    address private immutable self = address(this);

    /// One deposit's signed intent, as `sweepMany` takes it.
    struct Order {
        address deposit;
        address to;
        address[] tokens;
        uint256 deadline;
        uint8 v;
        bytes32 r;
        bytes32 s;
    }

    error Expired();
    error BadSignature();
    error BalanceUnreadable(address token);
    error TransferFailed(address token);
    error NativeTransferFailed();
    error NotADeposit();

    /// A delegated deposit keeps receiving native coins (late payments); the sweeper itself refuses them.
    receive() external payable {
        if (address(this) == self) revert NotADeposit();
    }

    /// Runs in a deposit's context: moves every listed token's whole balance, then the whole native
    /// balance, to `to`, if the deposit's own key signed exactly this intent on this chain.
    function sweep(address to, address[] calldata tokens, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external {
        if (block.timestamp > deadline) revert Expired();
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) revert BadSignature();
        bytes32 domain = keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
        bytes32 structHash = keccak256(abi.encode(SWEEP_TYPEHASH, to, keccak256(abi.encodePacked(tokens)), deadline));
        address signer = ecrecover(keccak256(abi.encodePacked("\x19\x01", domain, structHash)), v, r, s);
        if (signer == address(0) || signer != address(this)) revert BadSignature();

        for (uint256 i = 0; i < tokens.length; i++) _sweepToken(tokens[i], to);
        uint256 native = address(this).balance;
        if (native > 0) {
            (bool ok, ) = to.call{value: native}("");
            if (!ok) revert NativeTransferFailed();
        }
    }

    /// The fee payer's one transaction: executes each deposit's intent in turn (each deposit must be
    /// delegated here, by this transaction's authorization list or an earlier one).
    function sweepMany(Order[] calldata orders) external {
        for (uint256 i = 0; i < orders.length; i++) {
            Order calldata o = orders[i];
            Sweeper(payable(o.deposit)).sweep(o.to, o.tokens, o.deadline, o.v, o.r, o.s);
        }
    }

    function _sweepToken(address token, address to) private {
        (bool ok, bytes memory ret) = token.staticcall(abi.encodeWithSelector(0x70a08231, address(this)));
        if (!ok || ret.length < 32) revert BalanceUnreadable(token);
        uint256 balance = abi.decode(ret, (uint256));
        if (balance == 0) return;
        // transfer(address,uint256): USDT returns nothing, older tokens return false on failure.
        (ok, ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to, balance));
        if (!ok || (ret.length > 0 && (ret.length < 32 || !abi.decode(ret, (bool))))) revert TransferFailed(token);
    }
}
