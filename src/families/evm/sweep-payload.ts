import { getAddress, getCreate2Address, Interface, ZeroHash } from 'ethers';
import { z } from 'zod';

// What an EVM sweep plan's transactions carry (UnsignedSweepTx.payload), shared by the planner
// that writes them and the offline signer that checks and signs them. A payload is structured
// data, never ready calldata: the signer builds every call itself from the plan's destination, so
// a tampered plan can change amounts or fees but never where the money goes.

/**
 * The deterministic deployment proxy (github.com/Arachnid/deterministic-deployment-proxy), at the
 * same address on every chain chaingate sweeps: `salt ‖ initCode` in, CREATE2 out.
 */
export const CREATE2_DEPLOYER = '0x4e59b44847b379578588920cA78FbF26c0B4956C';
export const SWEEPER_SALT = ZeroHash;
/** keccak256 of contracts/build/Sweeper.json's bytecode (sweep-payload.test.ts checks it): the code deposits delegate to. */
export const SWEEPER_INIT_CODE_HASH = '0x0b40750d9cd8f8d96ea2e5a89293539d3b9dd6a6797cc586f5c16b544f2430c6';
export const SWEEPER_ADDRESS = getCreate2Address(CREATE2_DEPLOYER, SWEEPER_SALT, SWEEPER_INIT_CODE_HASH);

export const SWEEPER_ABI = new Interface([
  'function sweep(address to, address[] tokens, uint256 deadline, uint8 v, bytes32 r, bytes32 s)',
  'function sweepMany((address deposit, address to, address[] tokens, uint256 deadline, uint8 v, bytes32 r, bytes32 s)[] orders)',
  'error Expired()',
  'error BadSignature()',
  'error BalanceUnreadable(address token)',
  'error TransferFailed(address token)',
  'error NativeTransferFailed()',
  'error NotADeposit()',
]);

/** balanceOf and transfer; `transfer` declared without a return so USDT-style tokens encode the same. */
export const ERC20_ABI = new Interface(['function balanceOf(address owner) view returns (uint256)', 'function transfer(address to, uint256 amount)']);

/** EIP-712 `Sweep` intent a deposit signs: its verifyingContract is the deposit itself (Sweeper.sol). */
export function sweepTypedData(chainId: bigint, deposit: string, to: string, tokens: readonly string[], deadline: bigint) {
  return {
    domain: { name: 'chaingate Sweeper', version: '1', chainId, verifyingContract: deposit },
    types: { Sweep: [{ name: 'to', type: 'address' }, { name: 'tokens', type: 'address[]' }, { name: 'deadline', type: 'uint256' }] },
    value: { to, tokens: [...tokens], deadline },
  };
}

/** The code EIP-7702 writes to an account delegated to `target`. */
export function delegationCode(target: string): string {
  return `0xef0100${target.slice(2).toLowerCase()}`;
}

const atomic = z.string().regex(/^(0|[1-9]\d*)$/, 'an amount in atomic units (decimal string)');
const addressText = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'a 20-byte hex address');
/** The EIP-1559 fields every sweep transaction carries. */
const fees = {
  chainId: z.number().int().positive(),
  from: addressText,
  nonce: z.number().int().nonnegative(),
  gasLimit: atomic,
  maxFeePerGas: atomic,
  maxPriorityFeePerGas: atomic,
};

export const EvmSweepPayloadSchema = z.discriminatedUnion('kind', [
  /** A deposit sends its native coin to the plan's destination. */
  z.strictObject({ kind: z.literal('native'), ...fees, value: atomic }),
  /** A deposit calls `token.transfer(plan.to, amount)`, paying its own gas. */
  z.strictObject({ kind: z.literal('token'), ...fees, token: addressText, amount: atomic }),
  /** The fee payer sends a deposit the gas its token transfers need (networks without EIP-7702). */
  z.strictObject({ kind: z.literal('top-up'), ...fees, to: addressText, value: atomic }),
  /** The fee payer deploys the Sweeper through the CREATE2 proxy, once per chain. */
  z.strictObject({ kind: z.literal('deploy-sweeper'), ...fees, initCode: z.string().regex(/^0x[0-9a-fA-F]+$/) }),
  /** The fee payer's type-4 transaction: `Sweeper.sweepMany` over deposits that authorize the Sweeper. */
  z.strictObject({
    kind: z.literal('7702-batch'),
    ...fees,
    sweeper: addressText,
    /** Unix seconds after which the signed intents are void. */
    deadline: z.number().int().positive(),
    orders: z
      .array(
        z
          .strictObject({
            deposit: addressText,
            tokens: z.array(addressText),
            /** The deposit's account nonce for its authorization; null when it is already delegated to the Sweeper. */
            authNonce: z.number().int().nonnegative().nullable(),
            /**
             * What the plan expects this order to move: the deposit's native balance and, per token
             * (same order as `tokens`), its balance, at planning. The Sweeper moves whole balances,
             * so the bytes cannot say how much; these are what the verifier reads (sweep-verify.ts).
             */
            native: atomic,
            amounts: z.array(atomic),
          })
          .refine((o) => o.amounts.length === o.tokens.length, { message: 'one amount per token', path: ['amounts'] }),
      )
      .min(1),
  }),
]);

export type EvmSweepPayload = z.infer<typeof EvmSweepPayloadSchema>;
export type EvmBatchPayload = Extract<EvmSweepPayload, { kind: '7702-batch' }>;
export type EvmPlainPayload = Exclude<EvmSweepPayload, { kind: '7702-batch' }>;

/** The EIP-1559 fields a payload's transaction is signed with (the signer signs them, the verifier compares them). */
export function feeFields(p: EvmSweepPayload): { chainId: bigint; nonce: number; gasLimit: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  return { chainId: BigInt(p.chainId), nonce: p.nonce, gasLimit: BigInt(p.gasLimit), maxFeePerGas: BigInt(p.maxFeePerGas), maxPriorityFeePerGas: BigInt(p.maxPriorityFeePerGas) };
}

/** The call a payload other than a batch makes, every move going to the plan's destination `to`. */
export function plainCall(p: EvmPlainPayload, to: string): { to: string; value: bigint; data: string } {
  switch (p.kind) {
    case 'native':
      return { to, value: BigInt(p.value), data: '0x' };
    case 'token':
      return { to: getAddress(p.token), value: 0n, data: ERC20_ABI.encodeFunctionData('transfer', [to, BigInt(p.amount)]) };
    case 'top-up':
      return { to: getAddress(p.to), value: BigInt(p.value), data: '0x' };
    case 'deploy-sweeper':
      return { to: CREATE2_DEPLOYER, value: 0n, data: `${SWEEPER_SALT}${p.initCode.slice(2)}` };
  }
}
