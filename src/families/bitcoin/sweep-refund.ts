import * as bitcoin from 'bitcoinjs-lib';
import { UsageError } from '../../domain/errors.ts';
import { formatUnits } from '../../domain/money.ts';
import type { PlannedDeposit, RefundAsk, SweepCandidate, SweepPlan } from '../sweep.ts';
import type { Utxo } from './sweep-api.ts';
import { btc, type BitcoinSweepPayload } from './sweep-payload.ts';
import { type DepositScript, dustLimit, INPUT_WEIGHT, outputWeight, overheadWeight, vsizeOf } from './sweep-weights.ts';

// A bitcoin refund (docs/sweeps/bitcoin.md#refunds): one PSBT spending the address's confirmed
// outputs, paying the buyer and, when the rest is worth an output, one change output back to the
// same address. The address pays the fee: out of the change when it covers it, else out of the refund.

export interface RefundInput {
  candidate: SweepCandidate;
  script: DepositScript;
  utxos: Utxo[];
  /** sat/vB. */
  rate: bigint;
  refund: RefundAsk;
  toScript: Uint8Array;
  js: bitcoin.Network;
  /** The PSBT input for one of the address's outputs (witness UTXO, RBF, BIP32 derivation). */
  inputOf(candidate: SweepCandidate, script: DepositScript, utxo: Utxo): Parameters<bitcoin.Psbt['addInput']>[0];
}

const sats = (n: bigint) => `${n} sat (${formatUnits(n, 8)} BTC)`;

export function planRefund({ candidate, script, utxos, rate, refund, toScript, js, inputOf }: RefundInput): Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'> {
  const amount = refund.amount;
  if (amount <= 0n) throw new UsageError('a refund moves more than 0 BTC');
  const sum = (list: Utxo[]) => list.reduce((s, u) => s + u.value, 0n);
  const confirmed = utxos.filter((u) => u.confirmed);
  const pending = utxos.filter((u) => !u.confirmed);
  const leftBehind: PlannedDeposit['leftBehind'] = pending.map((u) => ({ holding: btc(u.value), reason: 'not refunded: unconfirmed' }));
  if (sum(confirmed) < amount) {
    const unconfirmed = sum(pending) > 0n ? ` (and ${sats(sum(pending))} unconfirmed)` : '';
    throw new UsageError(`${candidate.address} holds ${sats(sum(confirmed))} confirmed${unconfirmed}: less than the refund of ${sats(amount)}`);
  }
  // Outputs that cost more to spend than they hold stay, unless the refund needs them.
  const inputCost = BigInt(vsizeOf(INPUT_WEIGHT[script])) * rate;
  const worth = confirmed.filter((u) => u.value > inputCost);
  const inputs = sum(worth) >= amount ? worth : confirmed;
  for (const u of confirmed) if (!inputs.includes(u)) leftBehind.push({ holding: btc(u.value), reason: `not refunded: dust (spending it costs ${inputCost} sat at ${rate} sat/vB)` });

  const changeScript = bitcoin.address.toOutputScript(candidate.address, js);
  const changeDust = dustLimit(changeScript);
  const sizeWith = (outputs: 1 | 2) =>
    vsizeOf(overheadWeight(inputs.length, outputs) + inputs.length * INPUT_WEIGHT[script] + outputWeight(toScript.length) + (outputs === 2 ? outputWeight(changeScript.length) : 0));
  const [vsize1, vsize2] = [sizeWith(1), sizeWith(2)];
  const [fee1, fee2] = [BigInt(vsize1) * rate, BigInt(vsize2) * rate];
  const rest = sum(inputs) - amount;

  // The rest pays the fee when it can; change below the dust limit is no output (no node relays it) and goes to the fee.
  let shape: { paid: bigint; change: bigint; vsize: number };
  if (rest >= fee2 + changeDust) shape = { paid: amount, change: rest - fee2, vsize: vsize2 };
  else if (rest >= fee1) shape = { paid: amount, change: 0n, vsize: vsize1 };
  else if (rest >= changeDust) shape = { paid: amount - fee2, change: rest, vsize: vsize2 };
  else shape = { paid: amount - fee1, change: 0n, vsize: vsize1 };
  const fee = sum(inputs) - shape.paid - shape.change;
  if (shape.paid < dustLimit(toScript)) {
    throw new UsageError(`a refund of ${sats(amount)} would pay the buyer less than the dust limit after its ${sats(fee)} fee: refund more, or not at all`);
  }
  if (shape.change > 0n) leftBehind.push({ holding: btc(shape.change), reason: 'not refunded: stays on the address as the change output' });
  const toMiners = fee - BigInt(shape.vsize) * rate;
  if (toMiners > 0n) leftBehind.push({ holding: btc(toMiners), reason: `not refunded: below the ${changeDust} sat dust limit as change, so it goes to the miners with the fee` });

  const psbt = new bitcoin.Psbt({ network: js });
  psbt.setVersion(2);
  for (const utxo of inputs) psbt.addInput(inputOf(candidate, script, utxo));
  psbt.addOutput({ script: toScript, value: shape.paid });
  if (shape.change > 0n) psbt.addOutput({ script: changeScript, value: shape.change });
  const payload: BitcoinSweepPayload = { psbt: psbt.toBase64(), feeRate: rate.toString(), vsize: shape.vsize, fee: fee.toString() };
  return {
    deposits: [{ ...candidate, holdings: [btc(sum(utxos))], moves: [btc(shape.paid)], fee: fee.toString(), leftBehind }],
    skipped: [],
    transactions: [{ id: 'tx-0', signers: [candidate.address], deposits: [candidate.address], after: [], payload }],
  };
}
