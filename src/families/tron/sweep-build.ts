import { UsageError } from '../../domain/errors.ts';
import type { Holding, UnsignedSweepTx } from '../sweep.ts';
import { ConstantSchema, NowBlockSchema, type ResourceSchema, type TronCall } from './sweep-api.ts';
import { to41, transferData, type TronSweepPayload } from './sweep-payload.ts';
import { encodeRaw, encodeSigned, type TronContract, type TronRaw } from './sweep-proto.ts';
import type { z } from 'zod';

// What the Tron sweep and refund planners share: the reference block every transaction names,
// bandwidth and energy pricing by java-tron's rules, the node's TRC-20 reads, and the list of
// unsigned transactions a plan is built into.

/** java-tron refuses an expiration more than this after its head block (Constant.MAXIMUM_TIME_UNTIL_EXPIRATION). */
export const MAX_EXPIRATION_MS = 24n * 3_600_000n;
/** Kept below the limit so a node whose head is a little behind ours still accepts it. */
const EXPIRATION_MARGIN_MS = 120_000n;
/** java-tron adds this to a transaction's size when charging bandwidth (Constant.MAX_RESULT_SIZE_IN_TX). */
const RESULT_BYTES = 64n;
/** Energy estimates vary a little with the contract's dynamic energy factor between plan and send. */
const ENERGY_MARGIN_PERCENT = 120n;
/** java-tron's smallest delegation: 1 TRX. */
const MIN_DELEGATION = 1_000_000n;

export const hold = (symbol: string, token: string | null, decimals: number, amount: bigint): Holding => ({ symbol, token, decimals, amount: amount.toString() });
export const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;
export const withMargin = (energy: bigint) => ceilDiv(energy * ENERGY_MARGIN_PERCENT, 100n);

/** Sun of stake that lends `energy` (with the margin) at the network's ratio, at least 1 TRX; null when the node gives no ratio. */
export function lendFor(resource: z.infer<typeof ResourceSchema>, energy: bigint): bigint | null {
  if (resource.TotalEnergyLimit === 0n) return null;
  const sun = ceilDiv(withMargin(energy) * resource.TotalEnergyWeight, resource.TotalEnergyLimit) * 1_000_000n;
  return sun < MIN_DELEGATION ? MIN_DELEGATION : sun;
}

/** Bandwidth a signed transaction is charged: its bytes with one 65-byte signature, plus the result. */
export function bandwidthOf(raw: TronRaw): bigint {
  return BigInt(encodeSigned(encodeRaw(raw), [new Uint8Array(65)]).length) + RESULT_BYTES;
}

/** Bandwidth an account has: staked first, then the free daily allowance; what neither covers is burned whole. */
export class Bandwidth {
  constructor(
    private staked: bigint,
    private free: bigint,
  ) {}
  /** The sun a transaction of this size would burn, without using anything. */
  cost(bytes: bigint, pricePerByte: bigint): bigint {
    return bytes <= this.staked || bytes <= this.free ? 0n : bytes * pricePerByte;
  }
  /** The sun this transaction burns. */
  use(bytes: bigint, pricePerByte: bigint): bigint {
    if (bytes <= this.staked) this.staked -= bytes;
    else if (bytes <= this.free) this.free -= bytes;
    else return bytes * pricePerByte;
    return 0n;
  }
  /** Whether staked bandwidth pays for creating an account (java-tron consumeForCreateNewAccount); free points never do. */
  stakeCovers(bytes: bigint): boolean {
    return bytes <= this.staked;
  }
}

const balanceOfData = (address: string) => to41(address).slice(2).padStart(64, '0');

export async function tokenBalance(call: TronCall, token: string, owner: string): Promise<bigint> {
  const res = await call('/wallet/triggerconstantcontract', { owner_address: to41(owner), contract_address: to41(token), function_selector: 'balanceOf(address)', parameter: balanceOfData(owner) }, ConstantSchema);
  const word = res.constant_result?.[0];
  if (res.result.result !== true || !word || !/^[0-9a-f]{64}$/i.test(word)) throw new UsageError(`balanceOf on ${token} failed: ${res.result.message ?? 'no result'}`);
  return BigInt(`0x${word}`);
}

export async function transferEnergy(call: TronCall, token: string, from: string, to: string, amount: bigint): Promise<bigint> {
  const data = transferData(to, amount);
  const res = await call('/wallet/triggerconstantcontract', { owner_address: to41(from), contract_address: to41(token), function_selector: 'transfer(address,uint256)', parameter: data.slice(8) }, ConstantSchema);
  if (res.result.result !== true || res.energy_used === 0n) throw new UsageError(`the node could not estimate a ${token} transfer from ${from}: ${res.result.message ?? 'no energy figure'}`);
  return res.energy_used;
}

export type RawHeader = Omit<TronRaw, 'feeLimit' | 'contract'>;

/** The head block as every transaction's reference, and an expiration just inside java-tron's 24 h. */
export async function referenceHeader(call: TronCall): Promise<RawHeader> {
  const head = await call('/wallet/getnowblock', {}, NowBlockSchema);
  const number = head.block_header.raw_data.number;
  return {
    refBlockBytes: (number & 0xffffn).toString(16).padStart(4, '0'),
    refBlockHash: head.blockID.slice(16, 32),
    expiration: head.block_header.raw_data.timestamp + MAX_EXPIRATION_MS - EXPIRATION_MARGIN_MS,
    timestamp: BigInt(Date.now()),
  };
}

export interface PushOptions {
  after: string[];
  deposit: string;
  feeLimit?: bigint;
  energy?: bigint;
  /** The sun the transaction burns, given its bandwidth bytes. */
  burn: (bytes: bigint) => bigint;
}

/** The plan's transactions in order, ids tx-0, tx-1, …; a TRX or token transfer names its deposit. */
export function transactionList(header: RawHeader) {
  const transactions: UnsignedSweepTx[] = [];
  const push = (kind: TronSweepPayload['kind'], owner: string, contract: TronContract, o: PushOptions) => {
    const raw: TronRaw = { ...header, feeLimit: o.feeLimit ?? 0n, contract };
    const bytes = bandwidthOf(raw);
    const fee = o.burn(bytes);
    const id = `tx-${transactions.length}`;
    const payload: TronSweepPayload = {
      kind,
      from: owner,
      rawData: Buffer.from(encodeRaw(raw)).toString('hex'),
      expiration: header.expiration.toString(),
      energy: (o.energy ?? 0n).toString(),
      bandwidth: bytes.toString(),
      fee: fee.toString(),
    };
    transactions.push({ id, signers: [owner], deposits: kind === 'trx' || kind === 'token' ? [o.deposit] : [], after: o.after, payload });
    return { id, fee };
  };
  return { transactions, push };
}
