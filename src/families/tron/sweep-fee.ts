import { encodeRaw, encodeSigned, type TronRaw } from './sweep-proto.ts';

// What java-tron burns for one sweep transaction, by its own rules (docs/sweeps/tron.md#fees), in
// one place for the planner (which states it) and the verifier (which recomputes it from the bytes):
//  - bandwidth (chainbase BandwidthProcessor.consume): the transaction's size without its result,
//    plus Constant.MAX_RESULT_SIZE_IN_TX (64) per contract. A transaction that creates an account
//    (contractCreateNewAccount: an AccountCreateContract, or a TransferContract to an address with
//    no account) goes to consumeForCreateNewAccount: the owner's staked bandwidth pays
//    size × getCreateNewAccountBandwidthRate when it can (consumeBandwidthForCreateNewAccount),
//    else getCreateAccountFee (0.1 TRX) is burned (consumeFeeForCreateNewAccount); the free daily
//    points never pay for it. Any other transaction takes staked bandwidth (useAccountNet), else
//    the free points (useFreeNet), else burns size × getTransactionFee (useTransactionFee) — each
//    only when it covers the whole size;
//  - creating the account itself: getCreateNewAccountFeeInSystemContract (1 TRX) is burned by the
//    actuator, CreateAccountActuator.calcFee for an AccountCreateContract and TransferActuator's
//    `toAccount == null` branch for a TRX transfer to a new address;
//  - energy (TriggerSmartContract): at most fee_limit (VMActuator caps the energy of a call at
//    fee_limit / getEnergyFee, whether it comes from a stake, a delegation or burned TRX), so the
//    most it can cost is its fee_limit; delegated energy usually leaves that unburned.
// Delegating and taking back resources cost bandwidth only (their actuators' calcFee is 0).

/** java-tron adds this to a transaction's size when charging bandwidth (Constant.MAX_RESULT_SIZE_IN_TX). */
export const RESULT_BYTES = 64n;

/** Where java-tron takes a transaction's bandwidth from, as the planner found the owner's account. */
export type BandwidthSource = 'staked' | 'free' | 'burn';

/** The chain parameters (/wallet/getchainparameters) a transaction's fee is priced with, in sun. */
export interface TronFeePrices {
  /** getTransactionFee: sun per bandwidth byte burned. */
  transactionFee: bigint;
  /** getCreateAccountFee: burned for a new account's bandwidth when staked bandwidth does not pay it. */
  createAccountFee: bigint;
  /** getCreateNewAccountFeeInSystemContract: burned by the contract that creates an account. */
  createNewAccountFee: bigint;
}

/** Bandwidth of a signed transaction of `signedBytes` bytes. */
export const bandwidthOfSigned = (signedBytes: number): bigint => BigInt(signedBytes) + RESULT_BYTES;

/** Bandwidth a transaction is charged once signed with one 65-byte signature. */
export function bandwidthOf(raw: TronRaw): bigint {
  return bandwidthOfSigned(encodeSigned(encodeRaw(raw), [new Uint8Array(65)]).length);
}

export interface TronFee {
  bandwidth: bigint;
  creation: bigint;
  /** The fee limit: the most the energy can burn. */
  energy: bigint;
  total: bigint;
}

/** What one transaction burns at most, in sun, given its bandwidth, where that comes from, and whether it creates an account. */
export function tronFee(o: { raw: TronRaw; bandwidth: bigint; source: BandwidthSource; createsAccount: boolean; prices: TronFeePrices }): TronFee {
  let bandwidth: bigint;
  let creation = 0n;
  if (o.createsAccount) {
    bandwidth = o.source === 'staked' ? 0n : o.prices.createAccountFee;
    creation = o.prices.createNewAccountFee;
  } else bandwidth = o.source === 'burn' ? o.bandwidth * o.prices.transactionFee : 0n;
  const energy = o.raw.contract.type === 'TriggerSmartContract' ? o.raw.feeLimit : 0n;
  return { bandwidth, creation, energy, total: bandwidth + creation + energy };
}

/**
 * A TRX transfer that pays its own fee out of `total`: the amount and the fee it burns. The fee
 * depends a little on the amount (its varint length moves the size), so the amount is settled
 * against the fee of the transaction actually built; at a varint boundary up to one byte's price
 * may stay behind.
 */
export function selfPaying(total: bigint, feeOf: (amount: bigint) => bigint): { amount: bigint; fee: bigint } {
  let amount = total - feeOf(total);
  const fee = feeOf(amount);
  if (fee !== total - amount && feeOf(total - fee) === fee) amount = total - fee;
  return { amount, fee: feeOf(amount) };
}
