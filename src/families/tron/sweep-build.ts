import { UsageError } from '../../domain/errors.ts';
import type { Holding, UnsignedSweepTx } from '../sweep.ts';
import { ConstantSchema, NowBlockSchema, type ResourceSchema, type TronCall } from './sweep-api.ts';
import { to41, transferData, type TronSweepPayload } from './sweep-payload.ts';
import { type BandwidthSource, bandwidthOf, type TronFeePrices, tronFee } from './sweep-fee.ts';
import { encodeRaw, type TronContract, type TronRaw } from './sweep-proto.ts';
import type { z } from 'zod';

// What the Tron sweep and refund planners share: the reference block every transaction names,
// bandwidth and energy pricing by java-tron's rules, the node's TRC-20 reads, and the list of
// unsigned transactions a plan is built into.

/** java-tron refuses an expiration more than this after its head block (Constant.MAXIMUM_TIME_UNTIL_EXPIRATION). */
export const MAX_EXPIRATION_MS = 24n * 3_600_000n;
/** Kept below the limit so a node whose head is a little behind ours still accepts it. */
const EXPIRATION_MARGIN_MS = 120_000n;
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

/**
 * An account's bandwidth as java-tron spends it (sweep-fee.ts): staked first, then the free daily
 * points, each only when it covers the whole transaction, else burned; a transaction that creates
 * an account takes only staked bandwidth (size × the creation rate), else burns the 0.1 TRX fee.
 */
export class Bandwidth {
  constructor(
    private staked: bigint,
    private free: bigint,
    /** getCreateNewAccountBandwidthRate: staked points per byte of a transaction that creates an account. */
    private readonly createRate: bigint,
  ) {}
  /** Where this transaction's bandwidth would come from, without using anything. */
  source(bytes: bigint, createsAccount: boolean): BandwidthSource {
    if (createsAccount) return bytes * this.createRate <= this.staked ? 'staked' : 'burn';
    return bytes <= this.staked ? 'staked' : bytes <= this.free ? 'free' : 'burn';
  }
  /** Spends this transaction's bandwidth; says where it came from. */
  use(bytes: bigint, createsAccount: boolean): BandwidthSource {
    const from = this.source(bytes, createsAccount);
    if (from === 'staked') this.staked -= createsAccount ? bytes * this.createRate : bytes;
    else if (from === 'free') this.free -= bytes;
    return from;
  }
}

/** An account's bandwidth from /wallet/getaccountresource (null: no account yet, so its free points are all there). */
export function bandwidthOfAccount(resource: z.infer<typeof ResourceSchema> | null, prices: { freeNetLimit: bigint; createAccountBandwidthRate: bigint }): Bandwidth {
  if (!resource) return new Bandwidth(0n, prices.freeNetLimit, prices.createAccountBandwidthRate);
  return new Bandwidth(resource.NetLimit - resource.NetUsed, resource.freeNetLimit - resource.freeNetUsed, prices.createAccountBandwidthRate);
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
  /** The deposit the transaction serves: its fee counts in that deposit's `fee`, whoever pays it. */
  deposit: string;
  feeLimit?: bigint;
  energy?: bigint;
  /** The owner's bandwidth, spent by this transaction. */
  bandwidth: Bandwidth;
  /** A TRX transfer to an address with no account (an AccountCreateContract always creates one). */
  createsAccount?: boolean;
}

/** The plan's transactions in order, ids tx-0, tx-1, …; a TRX or token transfer names its deposit. Each is priced by java-tron's rules (sweep-fee.ts). */
export function transactionList(header: RawHeader, prices: TronFeePrices) {
  const transactions: UnsignedSweepTx[] = [];
  const feeByDeposit = new Map<string, bigint>();
  /** What the transaction would burn, without spending the owner's bandwidth. */
  const price = (contract: TronContract, o: Pick<PushOptions, 'feeLimit' | 'bandwidth' | 'createsAccount'>) => {
    const raw: TronRaw = { ...header, feeLimit: o.feeLimit ?? 0n, contract };
    const createsAccount = contract.type === 'AccountCreateContract' || o.createsAccount === true;
    const bytes = bandwidthOf(raw);
    return tronFee({ raw, bandwidth: bytes, source: o.bandwidth.source(bytes, createsAccount), createsAccount, prices }).total;
  };
  const push = (kind: TronSweepPayload['kind'], owner: string, contract: TronContract, o: PushOptions) => {
    const raw: TronRaw = { ...header, feeLimit: o.feeLimit ?? 0n, contract };
    const createsAccount = contract.type === 'AccountCreateContract' || o.createsAccount === true;
    const bytes = bandwidthOf(raw);
    const source = o.bandwidth.use(bytes, createsAccount);
    const fee = tronFee({ raw, bandwidth: bytes, source, createsAccount, prices }).total;
    const id = `tx-${transactions.length}`;
    const payload: TronSweepPayload = {
      kind,
      from: owner,
      rawData: Buffer.from(encodeRaw(raw)).toString('hex'),
      expiration: header.expiration.toString(),
      energy: (o.energy ?? 0n).toString(),
      bandwidth: bytes.toString(),
      fee: fee.toString(),
      bandwidthFrom: source,
      createsAccount,
      prices: { transactionFee: prices.transactionFee.toString(), createAccountFee: prices.createAccountFee.toString(), createNewAccountFee: prices.createNewAccountFee.toString() },
    };
    transactions.push({ id, signers: [owner], deposits: kind === 'trx' || kind === 'token' ? [o.deposit] : [], after: o.after, payload });
    feeByDeposit.set(o.deposit, (feeByDeposit.get(o.deposit) ?? 0n) + fee);
    return { id, fee };
  };
  /** Every fee the plan's transactions for this deposit may burn, the fee payer's included. */
  const feeOf = (deposit: string) => feeByDeposit.get(deposit) ?? 0n;
  return { transactions, push, price, feeOf };
}
