import { getAddress } from 'ethers';
import { UsageError } from '../../domain/errors.ts';
import type { SweepPlan } from '../sweep.ts';
import type { EvmSweepPayload } from './sweep-payload.ts';

// The offline signer's extra checks on a refund plan (sweep-refund-plan.ts builds them): one
// address, one transfer of the refunded coin to the plan's buyer of exactly what the summary
// says, and before it at most gas top-ups from the fee payer. A sweep's checks only bound where
// money goes; a refund must also bound how much, since the buyer is not the merchant's own wallet.

export function checkRefund(plan: SweepPlan, payloads: ReadonlyMap<string, EvmSweepPayload>): void {
  const refund = plan.refund;
  if (plan.kind !== 'refund' || !refund) throw new UsageError(`a plan of kind "${plan.kind}" ${refund ? 'with' : 'without'} refund terms: refused`);
  const [deposit] = plan.deposits;
  if (!deposit || plan.deposits.length !== 1) throw new UsageError(`a refund plan pays from exactly one address, this one names ${plan.deposits.length}`);
  const [move] = deposit.moves;
  const sameToken = (a: string | null, b: string | null) => (a === null || b === null ? a === b : getAddress(a) === getAddress(b));
  if (!move || deposit.moves.length !== 1 || !sameToken(move.token, refund.token)) throw new UsageError(`the refund plan's summary moves other coins than its refund of ${refund.symbol}`);

  const amount = BigInt(refund.amount);
  const moved = BigInt(move.amount);
  const from = getAddress(deposit.address);
  const transfers = [...payloads].filter(([, p]) => p.kind !== 'top-up');
  const [only] = transfers;
  if (!only || transfers.length !== 1) throw new UsageError(`a refund plan holds exactly one transfer besides gas top-ups, this one ${transfers.length}`);
  const [id, p] = only;
  // The Sweeper's batch moves whole balances: never to a buyer.
  if (p.kind !== 'token' && p.kind !== 'native') throw new UsageError(`${id}: a ${p.kind} transaction cannot pay a refund of ${refund.symbol}`);
  if (getAddress(p.from) !== from) throw new UsageError(`${id}: the refund is sent from another address than the plan's`);
  if (p.kind === 'token') {
    if (refund.token === null || getAddress(p.token) !== getAddress(refund.token)) throw new UsageError(`${id}: transfers another token than the refund's ${refund.symbol}`);
    if (BigInt(p.amount) !== amount || moved !== amount) throw new UsageError(`${id}: transfers ${p.amount} atomic ${refund.symbol}, but the refund is ${refund.amount}`);
    return;
  }
  if (refund.token !== null) throw new UsageError(`${id}: sends the native coin, but the refund is in ${refund.symbol}`);
  // The buyer gets the refund, or the refund less this transfer's fee reserve when the address pays it from the refund.
  const value = BigInt(p.value);
  const fee = BigInt(p.gasLimit) * BigInt(p.maxFeePerGas);
  if (value !== moved || (value !== amount && value + fee !== amount)) throw new UsageError(`${id}: sends ${p.value} atomic ${refund.symbol}, but the refund is ${refund.amount}`);
}
