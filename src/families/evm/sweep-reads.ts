import { getAddress, toQuantity } from 'ethers';
import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import { UsageError } from '../../domain/errors.ts';
import type { Rpc } from '../jsonrpc/rpc.ts';
import { hexData, quantity } from '../jsonrpc/schemas.ts';
import { RpcUnsupportedError } from '../source.ts';
import type { SweepCandidate } from '../sweep.ts';
import { ERC20_ABI, type EvmSweepPayload } from './sweep-payload.ts';

// What the EVM planners (sweep-plan.ts for sweeps, sweep-refund-plan.ts for refunds) read from
// the network's RPC, and the gas arithmetic they share.

/** Every estimate is raised by this much (percent): the gas limit is a ceiling; only gas used is paid. */
export const GAS_MARGIN_PERCENT = 25n;

const FeeHistorySchema = z.looseObject({ baseFeePerGas: z.array(quantity).min(1), reward: z.array(z.array(quantity)).optional() });

export type Call = <T>(method: string, params: unknown[], schema: z.ZodType<T>) => Promise<T>;

export interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** The next block's base fee plus the tip: what a transaction is likely to pay per gas today. */
  likelyPerGas: bigint;
}

export interface Live {
  candidate: SweepCandidate;
  address: string;
  native: bigint;
  /** Token holdings above zero, in the registry's order. */
  tokens: { symbol: string; address: string; decimals: number; amount: bigint }[];
  nonce: number;
  code: string;
}

export function withMargin(gas: bigint): bigint {
  return gas + (gas * GAS_MARGIN_PERCENT) / 100n;
}

/** What `gas` (a limit raised by the margin) likely costs at today's fees. */
export function likelyCost(gas: bigint, fees: Fees): bigint {
  return ((gas * 100n) / (100n + GAS_MARGIN_PERCENT)) * fees.likelyPerGas;
}

export function rpcCall(rpc: Rpc): Call {
  return (method, params, schema) => rpc.call(method, params, { schema, maxAttempts: 3 });
}

export async function readFees(rpc: Rpc): Promise<Fees> {
  const history = await rpc.call('eth_feeHistory', [toQuantity(1), 'latest', [50]], { schema: FeeHistorySchema, maxAttempts: 3 });
  const nextBase = BigInt(history.baseFeePerGas[history.baseFeePerGas.length - 1] as string);
  let tip: bigint;
  try {
    tip = BigInt(await rpc.call('eth_maxPriorityFeePerGas', [], { schema: quantity, maxAttempts: 3 }));
  } catch (err) {
    if (!(err instanceof RpcUnsupportedError)) throw err;
    tip = BigInt(history.reward?.[0]?.[0] ?? '0x0');
  }
  // Twice the base fee: the transaction still lands after six full blocks of rising fees (EIP-1559's 12.5 % a block).
  return { maxFeePerGas: nextBase * 2n + tip, maxPriorityFeePerGas: tip, likelyPerGas: nextBase + tip };
}

/** Refuses an endpoint that serves another chain than the network's. */
export async function checkChainId(call: Call, network: ResolvedNetwork): Promise<void> {
  const remote = BigInt(await call('eth_chainId', [], quantity));
  if (remote !== BigInt(network.chainId as number)) {
    throw new UsageError(`the RPC endpoint serves chain id ${remote}, but ${network.chain} ${network.network} is ${network.chainId}`);
  }
}

/** One candidate's native balance, registry token balances, next nonce and code, as the chain has them now. */
export async function readLive(call: Call, network: ResolvedNetwork, candidate: SweepCandidate): Promise<Live> {
  const tokens = network.tokens.filter((t): t is typeof t & { address: string } => t.address !== null);
  const address = getAddress(candidate.address);
  const [native, nonce, code, ...balances] = await Promise.all([
    call('eth_getBalance', [address, 'latest'], quantity),
    call('eth_getTransactionCount', [address, 'pending'], quantity),
    call('eth_getCode', [address, 'latest'], hexData),
    ...tokens.map((t) => call('eth_call', [{ to: t.address, data: ERC20_ABI.encodeFunctionData('balanceOf', [address]) }, 'latest'], hexData)),
  ]);
  return {
    candidate,
    address,
    native: BigInt(native),
    nonce: Number(BigInt(nonce)),
    code: code.toLowerCase(),
    tokens: tokens
      .map((t, i) => ({ symbol: t.symbol, address: getAddress(t.address), decimals: t.decimals, amount: BigInt(balances[i] === '0x' ? '0x0' : (balances[i] as string).slice(0, 66)) }))
      .filter((t) => t.amount > 0n),
  };
}

/** Refuses a plan whose fee payer holds less than its transactions may spend (every gas limit at the max fee, plus values sent). */
export async function requireFeePayerFunds(call: Call, network: ResolvedNetwork, feePayer: string, payloads: readonly EvmSweepPayload[]): Promise<void> {
  if (payloads.length === 0) return;
  const need = payloads.reduce((sum, p) => sum + BigInt(p.gasLimit) * BigInt(p.maxFeePerGas) + ('value' in p ? BigInt(p.value) : 0n), 0n);
  const has = BigInt(await call('eth_getBalance', [feePayer, 'latest'], quantity));
  if (has < need) {
    throw new UsageError(
      `the fee payer holds ${has} atomic ${network.native.symbol} but the plan may spend up to ${need} (gas at twice today's base fee, and top-ups): send it at least ${need - has} more and plan again`,
    );
  }
}
