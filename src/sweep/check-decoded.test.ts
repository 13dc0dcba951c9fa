import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress } from 'ethers';
import type { DecodedSweepTx, SweepPlan } from '../families/sweep.ts';
import { checkDecoded, feeShare } from './check-decoded.ts';
import { planId } from './plan-file.ts';

// The one comparison of what transactions do with what their plan says, on a hand-made EVM plan
// (the families' own tests feed it their decoders' output on real runtimes).

const addr = (n: number) => getAddress(`0x${n.toString(16).padStart(40, '0')}`);
const COLD = addr(0xc01d);
const DEPOSIT = addr(0xd1);
const PAYER = addr(0xfee);
const ETH = { symbol: 'ETH', token: null, decimals: 18 };
const gwei = (n: bigint) => n * 1_000_000_000n;

function plan(over: Partial<Omit<SweepPlan, 'id'>> = {}, moved = 1_499_980_000_000_000_000n, fee = gwei(20_000n) * 21_000n / 1_000n): SweepPlan {
  const body: Omit<SweepPlan, 'id'> = {
    format: 'chaingate-sweep-plan/1',
    kind: 'sweep',
    chain: 'ethereum',
    family: 'evm',
    network: 'MAINNET',
    testnet: false,
    to: COLD,
    feePayer: null,
    createdAt: '2026-11-28T00:00:00.000Z',
    deposits: [{ address: DEPOSIT, derivationIndex: 0, source: 'abc', holdings: [{ ...ETH, amount: '1500000000000000000' }], moves: [{ ...ETH, amount: moved.toString() }], fee: fee.toString(), leftBehind: [] }],
    skipped: [],
    transactions: [{ id: 'tx-0', signers: [DEPOSIT], deposits: [DEPOSIT], after: [], payload: {} }],
    ...over,
  };
  return { ...body, id: planId(body) };
}

const tx = (over: Partial<DecodedSweepTx> = {}): DecodedSweepTx => ({
  id: 'tx-0',
  spends: [DEPOSIT],
  pays: [{ to: COLD, ...ETH, amount: 1_499_980_000_000_000_000n }],
  fee: gwei(20_000n) * 21_000n / 1_000n,
  feePaidBy: DEPOSIT,
  chainId: '1',
  ...over,
});

test('checkDecoded passes transactions that do what the plan says, and reads the totals', () => {
  const reading = checkDecoded(plan(), [tx()], { maxFee: null });
  assert.equal(reading.fee, 420_000_000_000_000n);
  assert.equal(reading.nativeMoved, 1_499_980_000_000_000_000n);
  assert.equal(feeShare(reading.fee, reading.nativeMoved), '0.02 %');
});

test('checkDecoded refuses a payload that moves less than the summary says and burns the rest in fees', () => {
  // The case: "moves 1.49998 ETH, fee 0.00002 ETH" while the payload sends 0.0001 ETH at 71,423 gwei.
  const burn = tx({ pays: [{ to: COLD, ...ETH, amount: 100_000_000_000_000n }], fee: gwei(71_423n) * 21_000n });
  assert.throws(() => checkDecoded(plan(), [burn], { maxFee: null }), /summary moves 1\.49998 ETH to .*, but its transactions move 0\.0001 ETH/);
  // Even when the summary is rewritten to match (and the id recomputed), the fee bound holds.
  const honest = plan({}, 100_000_000_000_000n, gwei(71_423n) * 21_000n);
  assert.throws(() => checkDecoded(honest, [burn], { maxFee: null }), /more than 0\.005 ETH per deposit moved \(1\): refused, nothing signed; if that is right, sign again with --max-fee 1\.499883/);
  assert.equal(checkDecoded(honest, [burn], { maxFee: gwei(71_423n) * 21_000n }).fee, gwei(71_423n) * 21_000n, '--max-fee allows exactly what it names');
  assert.throws(() => checkDecoded(honest, [burn], { maxFee: 1n }), /more than --max-fee 0\.000000000000000001 ETH/);
});

test('checkDecoded refuses fees the summary does not state', () => {
  assert.throws(() => checkDecoded(plan(), [tx({ fee: 1n + gwei(20_000n) * 21_000n / 1_000n })], { maxFee: null }), /summary says fees of 0\.00042 ETH, but its transactions can pay 0\.000420000000000001 ETH/);
});

test('checkDecoded refuses a share of more than 2 % of a native amount above the floor', () => {
  const small = plan({}, 10_000_000_000_000_000n, 1_000_000_000_000_000n);
  const t = tx({ pays: [{ to: COLD, ...ETH, amount: 10_000_000_000_000_000n }], fee: 1_000_000_000_000_000n });
  assert.throws(() => checkDecoded(small, [t], { maxFee: null }), /more than 2 % of the 0\.01 ETH they move/);
  // Under the floor a fee is accepted whatever its share (a small refund).
  const tiny = plan({}, 1_000_000_000_000_000n, 400_000_000_000_000n);
  checkDecoded(tiny, [tx({ pays: [{ to: COLD, ...ETH, amount: 1_000_000_000_000_000n }], fee: 400_000_000_000_000n })], { maxFee: null });
});

test('checkDecoded refuses a payment to an address that is neither the destination nor the plan\'s own', () => {
  const thief = addr(0xbad);
  assert.throws(() => checkDecoded(plan(), [tx({ pays: [{ to: thief, ...ETH, amount: 1_499_980_000_000_000_000n }] })], { maxFee: null }), new RegExp(`pays 1\\.49998 ETH to ${thief}, which is neither the plan's destination`));
});

test('checkDecoded allows internal moves to the plan\'s own addresses (a gas top-up)', () => {
  const p = plan({ feePayer: PAYER, transactions: [
    { id: 'tx-0', signers: [PAYER], deposits: [DEPOSIT], after: [], payload: {} },
    { id: 'tx-1', signers: [DEPOSIT], deposits: [DEPOSIT], after: ['tx-0'], payload: {} },
  ] }, 1_499_980_000_000_000_000n, 840_000_000_000_000n);
  const topUp = tx({ id: 'tx-0', spends: [PAYER], feePaidBy: PAYER, pays: [{ to: DEPOSIT, ...ETH, amount: 420_000_000_000_000n }] });
  checkDecoded(p, [topUp, tx({ id: 'tx-1' })], { maxFee: null });
  assert.throws(() => checkDecoded(p, [tx({ id: 'tx-0', spends: [addr(0x99)], feePaidBy: PAYER, pays: [] }), tx({ id: 'tx-1' })], { maxFee: null }), /spends from 0x0+99, which is neither a deposit of the plan nor its fee payer/);
});

test('checkDecoded takes chains and chain ids from the registry, never from the plan\'s label', () => {
  assert.throws(() => checkDecoded(plan(), [tx({ chainId: '56' })], { maxFee: null }), /carries chain id 56, but ethereum MAINNET is 1/);
  // A plan relabelled DEVNET does not switch the check off: only the registry's devnet ids pass.
  const devnet = plan({ network: 'DEVNET', testnet: true });
  assert.throws(() => checkDecoded(devnet, [tx({ chainId: '56' })], { maxFee: null }), /carries chain id 56, but ethereum DEVNET is 31337 or 1337/);
  checkDecoded(devnet, [tx({ chainId: '31337' })], { maxFee: null });
  assert.throws(() => checkDecoded(plan({ network: 'DEVNET' }), [tx()], { maxFee: null }), /the registry's mainnet is MAINNET/);
  assert.throws(() => checkDecoded(plan({ network: 'REGTEST', testnet: true }), [tx({ chainId: '11155111' })], { maxFee: null }), /testnet networks are SEPOLIA, DEVNET/);
  assert.throws(() => checkDecoded(plan({ family: 'tron' }), [tx()], { maxFee: null }), /says ethereum is a tron chain; it is evm/);
});

test('a refund plan moves only the refunded coin', () => {
  const refund = plan({ kind: 'refund', refund: { paymentId: 'p1', symbol: 'USDT', token: addr(0x7), decimals: 6, amount: '1' } });
  assert.throws(() => checkDecoded(refund, [tx()], { maxFee: null }), /a refund of USDT moves another coin/);
});

test('sweep sign: --yes needs --expect-to, and --expect-to takes a file of cold addresses', async () => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { signSweep } = await import('./sign-sweep.ts');
  const { writePlanFile } = await import('./plan-file.ts');
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-expect-'));
  const file = join(dir, 'plan.json');
  writePlanFile(file, plan());
  const io = { say: () => {}, confirm: null };
  await assert.rejects(signSweep({ plan: file, out: join(dir, 's.json'), yes: true }, io), /--yes signs without asking, so it needs --expect-to <address or file>/);
  const list = join(dir, 'cold.txt');
  writeFileSync(list, `# cold wallets\nbc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq\n${addr(0xc01e)}  # the old one\n`);
  await assert.rejects(signSweep({ plan: file, out: join(dir, 's.json'), expectTo: list, yes: true }, io), new RegExp(`the plan sends to ${COLD}, which --expect-to ${list} does not name: refused, nothing signed`));
  writeFileSync(list, `bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq\n${COLD.toLowerCase()}\n`);
  // Past the destination check, the hand-made payload is what stops it: the verifier cannot read it.
  await assert.rejects(signSweep({ plan: file, out: join(dir, 's.json'), expectTo: list, yes: true }, io), /tx-0: /);
  writeFileSync(list, '# nothing\n');
  await assert.rejects(signSweep({ plan: file, out: join(dir, 's.json'), expectTo: list, yes: true }, io), /the file lists no address/);
});
