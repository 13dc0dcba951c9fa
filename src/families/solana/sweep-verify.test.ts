import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { address, type Blockhash, createNoopSigner, type Instruction } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { getCloseAccountInstruction, getCreateAssociatedTokenIdempotentInstruction, getTransferCheckedInstruction } from '@solana-program/token';
import type { SweepPlan } from '../sweep.ts';
import { solanaKeyAt } from './ed25519-keys.ts';
import { compileLegacy } from './sweep-accounts.ts';
import { associatedTokenAddress, TOKEN_PROGRAM } from './sweep-message.ts';
import { solanaSweepVerifier } from './sweep-verify.ts';

// The verifier's refusals on messages the planners never write, built offline with @solana/kit;
// the plan shapes the planners do write are read on litesvm in test/integration/sweep-solana-verify.test.ts.

const MAINNET_USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const lifetime = { blockhash: '4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM' as Blockhash, lastValidBlockHeight: 100n };
const [payer, deposit, cold, stranger] = [0, 1, 2, 3].map(() => solanaKeyAt(randomBytes(64), 0).address) as [string, string, string, string];

function planWith(instructions: Instruction[], extra: Partial<SweepPlan> = {}, closes?: Record<string, string>): SweepPlan {
  const { bytes } = compileLegacy(payer, lifetime, instructions);
  return {
    format: 'chaingate-sweep-plan/1', id: 'x', kind: 'sweep', chain: 'solana', family: 'solana', network: 'MAINNET', testnet: false, to: cold, feePayer: payer, createdAt: '2026-01-01T00:00:00Z', skipped: [],
    deposits: [{ address: deposit, derivationIndex: 1, source: 'file', holdings: [{ symbol: 'USDC', token: MAINNET_USDC, decimals: 6, amount: '5' }], moves: [], fee: '0', leftBehind: [] }],
    transactions: [{ id: 'tx-0', signers: [payer, deposit], deposits: [deposit], after: [], payload: { message: Buffer.from(bytes).toString('base64'), blockhash: lifetime.blockhash, lastValidBlockHeight: '100', fee: '10000', ...(closes ? { closes } : {}) } }],
    ...extra,
  };
}
const read = (plan: SweepPlan) => solanaSweepVerifier.decodeUnsigned(plan, plan.transactions[0]!);
const owner = createNoopSigner(address(deposit));
const source = address(associatedTokenAddress(deposit, MAINNET_USDC, TOKEN_PROGRAM));
const coldAta = address(associatedTokenAddress(cold, MAINNET_USDC, TOKEN_PROGRAM));
const transfer = (mint = MAINNET_USDC, decimals = 6) => getTransferCheckedInstruction({ source, mint: address(mint), destination: coldAta, authority: owner, amount: 5n, decimals });

test('decodeUnsigned() reads a token transfer as a pay to the owner of the account it credits, with the registry\'s symbol, and the new token account\'s rent as fee', () => {
  const create = getCreateAssociatedTokenIdempotentInstruction({ payer: createNoopSigner(address(payer)), ata: coldAta, owner: address(cold), mint: address(MAINNET_USDC) });
  const decoded = read(planWith([create, transfer()]));
  assert.deepEqual(decoded.pays, [{ to: cold, symbol: 'USDC', token: MAINNET_USDC, decimals: 6, amount: 5n }]);
  assert.equal(decoded.fee, 10_000n + 2_039_280n);
  assert.equal(decoded.feePaidBy, payer);
  assert.deepEqual(decoded.spends, [payer, deposit]);
});

test('decodeUnsigned() refuses instructions the planners never write, a mint the plan does not hold and another network\'s mint', () => {
  const foreign: Instruction = { programAddress: address('Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo'), data: new Uint8Array([1]) };
  assert.throws(() => read(planWith([foreign])), /instruction 0: a call to another program/);
  const allocate: Instruction = { programAddress: address('11111111111111111111111111111111'), accounts: [{ address: address(deposit), role: 3 }], data: new Uint8Array([8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]) };
  assert.throws(() => read(planWith([allocate])), /a System instruction other than Transfer/);
  const forStranger = getCreateAssociatedTokenIdempotentInstruction({ payer: createNoopSigner(address(payer)), ata: address(associatedTokenAddress(stranger, MAINNET_USDC, TOKEN_PROGRAM)), owner: address(stranger), mint: address(MAINNET_USDC) });
  assert.throws(() => read(planWith([forStranger])), /creates a token account for .*, which is not the plan's destination/);
  const paidByDeposit = getCreateAssociatedTokenIdempotentInstruction({ payer: owner, ata: coldAta, owner: address(cold), mint: address(MAINNET_USDC) });
  assert.throws(() => read(planWith([paidByDeposit])), /rent is paid by .*, not by the fee payer/);
  const unheld = solanaKeyAt(randomBytes(64), 0).address;
  assert.throws(() => read(planWith([transfer(unheld)])), /moves mint .*, which no deposit of the plan holds/);
  assert.throws(() => read(planWith([transfer(MAINNET_USDC, 9)])), /transferChecked says 9 decimals for USDC, which has 6/);
  // The mainnet USDC mint under a plan relabelled devnet.
  assert.throws(() => read(planWith([transfer()], { network: 'DEVNET', testnet: true })), /is solana MAINNET's USDC, but the plan is for DEVNET/);
  const close = getCloseAccountInstruction({ account: source, destination: address(cold), owner });
  assert.throws(() => read(planWith([close])), /closes token account .*, whose balance the payload does not state/);
  assert.deepEqual(read(planWith([close], {}, { [source]: '2039280' })).pays, [{ to: cold, symbol: 'SOL', token: null, decimals: 9, amount: 2_039_280n }]);
});

test('decodeUnsigned() prices a compute-unit price with the default limit of 200,000 units an instruction, rounded up', () => {
  const price: Instruction = { programAddress: address('ComputeBudget111111111111111111111111111111'), data: new Uint8Array([3, 7, 0, 0, 0, 0, 0, 0, 0]) };
  const send = getTransferSolInstruction({ source: owner, destination: address(cold), amount: 1n });
  // 2 instructions × 200,000 units × 7 micro-lamports = 2.8 lamports, charged as 3.
  assert.equal(read(planWith([price, send, send])).fee, 10_000n + 3n);
  assert.throws(() => read(planWith([price, price, send])), /a second SetComputeUnitPrice/);
});
