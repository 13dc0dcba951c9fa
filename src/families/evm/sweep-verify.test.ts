import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getAddress, parseEther, parseUnits, Transaction, Wallet } from 'ethers';
import { checkDecoded } from '../../sweep/check-decoded.ts';
import type { SweepPlan } from '../sweep.ts';
import { evmSweepSigner } from './sweep-sign.ts';
import { evmSweepVerifier } from './sweep-verify.ts';

// The verifier on issue 45's own figures, offline (the Hardhat cases, every plan shape and the signed
// raws the chain took, are in test/integration/sweep-evm.test.ts, refund-evm.test.ts, sweep-evm-cli.test.ts).

const deposit = new Wallet('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const cold = getAddress('0x000000000000000000000000000000000000c01d');
const gwei = (n: string) => parseUnits(n, 'gwei').toString();

/** A deposit holding 1.5 ETH swept by its own transfer: "moves 1.499979 ETH, fee 0.000021 ETH". */
function plan(edit: (payload: Record<string, unknown>, p: SweepPlan) => void = () => {}): SweepPlan {
  const p: SweepPlan = {
    format: 'chaingate-sweep-plan/1',
    id: 'test',
    kind: 'sweep',
    chain: 'ethereum',
    family: 'evm',
    network: 'DEVNET',
    testnet: true,
    to: cold,
    feePayer: null,
    createdAt: '2026-11-28T00:00:00.000Z',
    deposits: [
      {
        address: deposit.address,
        derivationIndex: 0,
        source: 'file',
        holdings: [{ symbol: 'ETH', token: null, decimals: 18, amount: parseEther('1.5').toString() }],
        moves: [{ symbol: 'ETH', token: null, decimals: 18, amount: parseEther('1.499979').toString() }],
        fee: parseEther('0.000021').toString(),
        leftBehind: [],
      },
    ],
    skipped: [],
    transactions: [
      {
        id: 'tx-0',
        signers: [deposit.address],
        deposits: [deposit.address],
        after: [],
        payload: { kind: 'native', chainId: 31_337, from: deposit.address, nonce: 0, gasLimit: '21000', maxFeePerGas: gwei('1'), maxPriorityFeePerGas: gwei('1'), value: parseEther('1.499979').toString() },
      },
    ],
  };
  edit(p.transactions[0]!.payload as Record<string, unknown>, p);
  return p;
}
const read = (p: SweepPlan) => checkDecoded(p, p.transactions.map((t) => evmSweepVerifier.decodeUnsigned(p, t)), { maxFee: null });
const sign = (p: SweepPlan) => evmSweepSigner.sign(p, new Map([[deposit.address, { address: deposit.address, privateKey: Buffer.from(deposit.privateKey.slice(2), 'hex') }]]));
/** 0.0001 ETH to the destination, the rest to the validator as a priority fee of 71,423 gwei. */
const burn = (x: Record<string, unknown>) => Object.assign(x, { value: parseEther('0.0001').toString(), maxFeePerGas: gwei('71423'), maxPriorityFeePerGas: gwei('71423') });

test('the honest plan reads as its summary; its signed raw reads the same, hashes to its txid, and is what ethers decodes', () => {
  const p = plan();
  const reading = read(p);
  assert.equal(reading.fee, parseEther('0.000021'));
  assert.equal(reading.nativeMoved, parseEther('1.499979'));
  const [signed] = sign(p);
  const got = evmSweepVerifier.decodeSigned(p, p.transactions[0]!, signed!.raw);
  assert.deepEqual(got, { ...reading.txs[0], txid: signed!.txid });
  const tx = Transaction.from(signed!.raw);
  assert.deepEqual([tx.hash, tx.from, tx.to, tx.value, tx.gasLimit * tx.maxFeePerGas!, tx.chainId], [got.txid, got.feePaidBy, got.pays[0]!.to, got.pays[0]!.amount, got.fee, BigInt(got.chainId!)]);
});

test('issue 45: a payload burning 1.49988 ETH as a priority fee under a summary of 1.499979 ETH is refused, relabelled or not', () => {
  assert.throws(() => read(plan(burn)), /the plan's summary moves 1\.499979 ETH to 0x0+C01D, but its transactions move 0\.0001 ETH: refused, nothing signed/);
  const agree = (_: unknown, p: SweepPlan) => Object.assign(p.deposits[0]!, { moves: [{ ...p.deposits[0]!.moves[0]!, amount: parseEther('0.0001').toString() }], fee: parseEther('1.499883').toString() });
  assert.throws(() => read(plan((x, p) => { burn(x); agree(x, p); })), /can pay 1\.499883 ETH in fees, more than 0\.005 ETH per deposit moved \(1\)/);
  const mainnet = (x: Record<string, unknown>, p: SweepPlan) => { Object.assign(p, { network: 'MAINNET', testnet: false }); x.chainId = 1; };
  assert.throws(() => read(plan((x, p) => { burn(x); mainnet(x, p); })), /summary moves 1\.499979 ETH .* but its transactions move 0\.0001 ETH/);
  assert.throws(() => read(plan((x, p) => { burn(x); agree(x, p); mainnet(x, p); })), /more than 0\.005 ETH per deposit moved/);
  assert.throws(() => read(plan((_, p) => { Object.assign(p, { network: 'MAINNET', testnet: false }); })), /carries chain id 31337, but ethereum MAINNET is 1/);
  assert.throws(() => sign(plan((_, p) => { Object.assign(p, { network: 'MAINNET', testnet: false }); })), /chain id 31337, but the plan is for ethereum MAINNET \(1\)/);
  // DEVNET names the local chains' ids only: BSC's 56 is refused by the verifier and by the signer.
  assert.throws(() => read(plan((x) => { x.chainId = 56; })), /carries chain id 56, but ethereum DEVNET is 31337 or 1337/);
  assert.throws(() => sign(plan((x) => { x.chainId = 56; })), /chain id 56, but the plan is for ethereum DEVNET \(31337 or 1337\)/);
});

test('decodeSigned refuses garbage, an unsigned raw, another key, and a raw paying elsewhere', () => {
  const p = plan();
  const [signed] = sign(p);
  const decode = (raw: string) => evmSweepVerifier.decodeSigned(p, p.transactions[0]!, raw);
  assert.throws(() => decode('00'), /tx-0: the signed raw is not 0x-prefixed hex bytes/);
  assert.throws(() => decode('0x00'), /tx-0: the signed raw is not an EVM transaction/);
  const tx = Transaction.from(signed!.raw);
  assert.throws(() => decode(tx.unsignedSerialized), /carries no signature/);
  const stranger = Wallet.createRandom();
  const resigned = (edit: (t: Transaction) => void, by: { signingKey: Wallet['signingKey'] } = deposit) => {
    const t = Transaction.from(signed!.raw);
    t.signature = null;
    edit(t);
    t.signature = by.signingKey.sign(t.unsignedHash);
    return t.serialized;
  };
  assert.throws(() => decode(resigned(() => {}, stranger)), /its signature does not verify against its sender/);
  assert.throws(() => decode(resigned((t) => { t.to = stranger.address; })), /the signed transaction's recipient is 0x[0-9a-fA-F]{40}, the plan's 0x0+C01D/);
  assert.throws(() => decode(resigned((t) => { t.nonce = 1; })), /the signed transaction's nonce is 1, the plan's 0/);
  assert.throws(() => decode(resigned((t) => { t.maxPriorityFeePerGas = BigInt(gwei('0.5')); })), /max priority fee per gas is 500000000, the plan's 1000000000/);
});
