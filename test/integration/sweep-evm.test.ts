/**
 * EVM sweeps on a real Hardhat 3 node (EDR, default hardfork Osaka: EIP-7702 type-4 transactions
 * run). Deposits derived from a test seed that never held ETH receive test tokens (TestToken as
 * USDC, NoBoolToken as USDT) and some native ETH; the family's own modules then plan (server),
 * sign (offline, pure) and send: tokens and ETH reach the cold address, deposits end empty, the fee
 * payer pays the gas. Through modules, not the CLI: the framework's `chaingate sweep` lands apart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Contract, getAddress, parseEther, parseUnits, Transaction, Wallet } from 'ethers';
import type { ResolvedNetwork } from '../../src/chains/registry.ts';
import type { Config } from '../../src/config/schema.ts';
import { deployFixtures, type EvmFixtures } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode, type HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { evmSweepPlanner } from '../../src/families/evm/sweep-plan.ts';
import { delegationCode, SWEEPER_ABI, SWEEPER_ADDRESS } from '../../src/families/evm/sweep-payload.ts';
import { evmSweepSender } from '../../src/families/evm/sweep-send.ts';
import { evmSweepSigner } from '../../src/families/evm/sweep-sign.ts';
import type { SignedSweepTx, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { createLogger } from '../../src/logger.ts';
import { accountNode, broadcastAll as broadcastOn, candidate, depositAddress, feePayer, prepareSweepChain, seedBytes, signOffline, token as fixtureToken } from '../helpers/evm-sweep.ts';

const cold = getAddress('0x000000000000000000000000000000000000c01d');
const attacker = getAddress('0x00000000000000000000000000000000bad0bad0');

let node: HardhatNode;
let fx: EvmFixtures;
let config: Config;
let network: ResolvedNetwork;
const log = createLogger('silent');

function planFile(chainPart: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, to = cold): SweepPlan {
  return { format: 'chaingate-sweep-plan/1', id: 'test', kind: 'sweep', chain: 'ethereum', family: 'evm', network: network.network, testnet: true, to, feePayer, createdAt: new Date().toISOString(), ...chainPart };
}

async function plan(candidates: SweepCandidate[], options: { net?: ResolvedNetwork; feePayer?: string | null; min?: Record<string, bigint> } = {}) {
  return planFile(
    await evmSweepPlanner.plan({ network: options.net ?? network, config, log, candidates, to: cold, feePayer: options.feePayer === undefined ? feePayer : options.feePayer, min: options.min ?? {} }),
  );
}

const broadcastAll = (signed: SignedSweepTx[]) => broadcastOn({ node, network, config }, signed);
const token = (c: Contract) => fixtureToken(fx, c);
const eth = (a: string) => node.provider.getBalance(a);
const usdc = (n: string) => parseUnits(n, 6);
/** A transaction's fee bound: gas limit × max fee per gas. */
const maxCost = (tx: SweepPlan['transactions'][number]) => {
  const p = tx.payload as { gasLimit: string; maxFeePerGas: string };
  return BigInt(p.gasLimit) * BigInt(p.maxFeePerGas);
};

describe('EVM sweeps on Hardhat (Osaka: EIP-7702)', () => {
  before(async () => {
    node = await startHardhatNode();
    fx = await deployFixtures(node);
    ({ config, network } = await prepareSweepChain(node, fx));
    assert.equal(network.eip7702, true, 'the Sepolia defaults say 7702; a DEVNET over them inherits it');
  });
  after(() => node?.stop());

  test('one fee-payer type-4 transaction empties token deposits that never held ETH, and native ones; a later sweep reuses the delegation', async () => {
    const [u, t] = [token(fx.usdc), token(fx.usdt)];
    await u.send(depositAddress(0), usdc('100'));
    await t.send(depositAddress(0), usdc('50'));
    await t.send(depositAddress(1), usdc('7'));
    await (await fx.payer.sendTransaction({ to: depositAddress(2), value: parseEther('1.5') })).wait();
    await u.send(depositAddress(3), usdc('5'));
    await (await fx.payer.sendTransaction({ to: depositAddress(3), value: parseEther('0.01') })).wait();

    const p = await plan([0, 1, 2, 3, 4].map(candidate));
    assert.deepEqual(p.skipped, [{ address: depositAddress(4), reason: 'nothing to move' }]);
    assert.deepEqual(
      p.transactions.map((tx) => (tx.payload as { kind: string }).kind),
      ['deploy-sweeper', '7702-batch'],
    );
    const batch = p.transactions[1]!;
    assert.deepEqual(batch.after, ['tx-0']);
    assert.deepEqual(batch.deposits, [0, 1, 2, 3].map(depositAddress));
    assert.ok(p.deposits.every((d) => BigInt(d.fee) > 0n && d.leftBehind.length === 0));
    // The deposits' fees state every fee the transactions can cost, the fee payer's deployment and batch included.
    assert.equal(p.deposits.reduce((s, d) => s + BigInt(d.fee), 0n), p.transactions.reduce((s, tx) => s + maxCost(tx), 0n));

    const feePayerBefore = await eth(feePayer);
    const signed = signOffline(p);
    assert.equal(Transaction.from(signed[1]!.raw).type, 4);
    assert.equal(Transaction.from(signed[1]!.raw).authorizationList?.length, 4);
    const gas = await broadcastAll(signed);

    assert.equal(await u.balance(cold), usdc('105'));
    assert.equal(await t.balance(cold), usdc('57'));
    assert.equal(await eth(cold), parseEther('1.51'));
    for (const i of [0, 1, 2, 3]) {
      assert.equal(await eth(depositAddress(i)), 0n, `deposit ${i} holds no ETH`);
      assert.equal(await u.balance(depositAddress(i)), 0n);
      assert.equal(await t.balance(depositAddress(i)), 0n);
      assert.equal((await node.provider.getCode(depositAddress(i))).toLowerCase(), delegationCode(SWEEPER_ADDRESS), `deposit ${i} stays delegated`);
    }
    assert.ok((await eth(feePayer)) < feePayerBefore, 'the fee payer paid the gas');
    const first = gas.get('tx-1')!;
    assert.ok(first <= BigInt((batch.payload as { gasLimit: string }).gasLimit), 'the estimate covers what the batch used');

    // Late funds after the sweep: the next plan needs no new authorization and no deployment.
    await u.send(depositAddress(0), usdc('1'));
    await t.send(depositAddress(1), usdc('2'));
    const again = await plan([0, 1].map(candidate));
    assert.deepEqual(again.transactions.map((tx) => (tx.payload as { kind: string }).kind), ['7702-batch']);
    assert.deepEqual((again.transactions[0]!.payload as { orders: { authNonce: number | null }[] }).orders.map((o) => o.authNonce), [null, null]);
    const signedAgain = signOffline(again);
    assert.equal(Transaction.from(signedAgain[0]!.raw).authorizationList?.length ?? 0, 0);
    await broadcastAll(signedAgain);
    assert.equal(await u.balance(cold), usdc('106'));
    assert.equal(await t.balance(cold), usdc('59'));
  });

  test('gas per swept deposit, first sweep and later sweeps, standard ERC-20 and USDT-like (docs/sweeps/evm.md)', async (t) => {
    const figures: string[] = [];
    for (const [name, c, start] of [['ERC-20 (TestToken)', fx.usdc, 20], ['USDT-like (NoBoolToken)', fx.usdt, 40]] as const) {
      const one = [candidate(start)];
      const ten = Array.from({ length: 10 }, (_, i) => candidate(start + 1 + i));
      const sweep = async (candidates: SweepCandidate[]) => {
        for (const cand of candidates) await token(c).send(cand.address, usdc('12.5'));
        const p = await plan(candidates);
        const batch = p.transactions.find((tx) => (tx.payload as { kind: string }).kind === '7702-batch')!;
        const used = (await broadcastAll(signOffline(p))).get(batch.id)!;
        assert.ok(used <= BigInt((batch.payload as { gasLimit: string }).gasLimit));
        for (const cand of candidates) assert.equal(await token(c).balance(cand.address), 0n);
        return used;
      };
      const [first1, first10] = [await sweep(one), await sweep(ten)];
      const [later1, later10] = [await sweep(one), await sweep(ten)];
      const line = (label: string, g1: bigint, g10: bigint) =>
        `${name}, ${label}: one deposit ${g1} gas; ten in one transaction ${g10} gas, ${g10 / 10n} each, ${(g10 - g1) / 9n} per added deposit`;
      figures.push(line('first sweep (authorization)', first1, first10), line('later sweep (still delegated)', later1, later10));
      assert.ok(later10 < first10, 'a later sweep needs no authorization');
    }
    for (const f of figures) t.diagnostic(f);
  });

  test('the signer refuses a tampered plan, and an intent used for another destination reverts on chain', async () => {
    await token(fx.usdc).send(depositAddress(5), usdc('9'));
    const p = await plan([candidate(5)]);
    const batchIndex = p.transactions.findIndex((tx) => (tx.payload as { kind: string }).kind === '7702-batch');
    const tamper = (edit: (payload: Record<string, unknown>) => void, at = batchIndex): SweepPlan => {
      const copy = structuredClone(p);
      edit(copy.transactions[at]!.payload as Record<string, unknown>);
      return copy;
    };
    assert.throws(() => signOffline(tamper((x) => { x.sweeper = attacker; })), /another contract than chaingate's Sweeper/);
    assert.throws(() => signOffline(tamper((x) => { x.from = fx.addresses.other; })), /not the plan's fee payer/);
    assert.throws(() => signOffline(tamper((x) => { (x.orders as { deposit: string }[])[0]!.deposit = fx.addresses.other; })), /not one of the plan's deposits/);
    assert.throws(() => signOffline({ ...p, network: 'SEPOLIA' }), /chain id 31337, but the plan is for ethereum SEPOLIA \(11155111\)/);
    assert.throws(() => signOffline({ ...p, chain: 'bitcoin', family: 'bitcoin' }), /not EVM/);
    // The fee payer's key, asked for as a deposit of unknown index (how the framework may ask), is found the same way.
    assert.equal(evmSweepSigner.deriveKey(seedBytes, { address: feePayer, derivationIndex: null, source: 'fee-payer' }, p, 20).address, feePayer);
    assert.throws(() => evmSweepSigner.deriveFeePayerKey!(seedBytes, { ...p, feePayer: attacker }, 20), /not an address of this seed/);
    // From the account's xprv instead of the seed: the same keys, deposits and fee payer.
    const xprv = accountNode.extendedKey;
    assert.equal(evmSweepSigner.deriveKeyFromAccount!(xprv, candidate(5), p, 20).address, depositAddress(5));
    assert.equal(evmSweepSigner.deriveKeyFromAccount!(xprv, { address: feePayer, derivationIndex: null, source: 'fee-payer' }, p, 20).address, feePayer);
    assert.throws(() => evmSweepSigner.deriveKeyFromAccount!(accountNode.neuter().extendedKey, candidate(5), p, 20), /cannot sign/);
    // A deposit address that this seed does not derive at its index.
    assert.throws(() => evmSweepSigner.deriveKey(seedBytes, { ...candidate(5), derivationIndex: 6 }, p, 20), /deposit 6 derives another address/);

    // Signed for the cold address; an executor who swaps in another destination is refused by the Sweeper.
    const signed = signOffline(p);
    const batchTx = Transaction.from(signed[batchIndex]!.raw);
    const [orders] = SWEEPER_ABI.decodeFunctionData('sweepMany', batchTx.data) as unknown as [{ deposit: string; to: string; tokens: string[]; deadline: bigint; v: number; r: string; s: string }[]];
    const forged = orders.map((o) => ({ deposit: o.deposit, to: attacker, tokens: [...o.tokens], deadline: o.deadline, v: o.v, r: o.r, s: o.s }));
    const relay = new Wallet(node.privateKeys[3]!, node.provider);
    // Delegate first, honestly (the plan's own transactions), then try the forged call from a stranger.
    await broadcastAll(signed.slice(0, batchIndex));
    const forgedCall = SWEEPER_ABI.encodeFunctionData('sweepMany', [forged]);
    // Hardhat's automine answers a reverting transaction with its revert data (a real node mines it as failed).
    const refusal = (await relay
      .sendTransaction({ type: 4, to: SWEEPER_ADDRESS, data: forgedCall, authorizationList: batchTx.authorizationList ?? [], gasLimit: 500_000n })
      .then((tx) => tx.wait())
      .then(
        () => null,
        (err: { data?: string; error?: { data?: string }; info?: { error?: { data?: string } } }) => err.data ?? err.error?.data ?? err.info?.error?.data ?? null,
      )) as string | null;
    assert.ok(refusal !== null, 'the forged sweep must revert');
    assert.equal(SWEEPER_ABI.parseError(refusal)?.name, 'BadSignature');
    assert.equal(await token(fx.usdc).balance(attacker), 0n);
    // The honest batch still works afterwards (the forged attempt changed nothing but a nonce it did not own).
    await broadcastAll(signed.slice(batchIndex));
    assert.equal(await token(fx.usdc).balance(depositAddress(5)), 0n);
  });

  test('a stale plan is refused by the node with its message; unknown and garbage transactions are told apart', async () => {
    await (await fx.payer.sendTransaction({ to: depositAddress(10), value: parseEther('0.1') })).wait();
    const p = await plan([candidate(10)], { feePayer: null });
    assert.deepEqual(p.transactions.map((tx) => (tx.payload as { kind: string }).kind), ['native']);
    const [signed] = signOffline(p);
    // The deposit's key spends elsewhere after planning: the planned nonce is gone.
    const key = evmSweepSigner.deriveKey(seedBytes, candidate(10), p, 20);
    const owner = new Wallet(`0x${Buffer.from(key.privateKey).toString('hex')}`, node.provider);
    assert.equal(await evmSweepSender.stale!(network, config, p), null, 'fresh before the deposit moves');
    await (await owner.sendTransaction({ to: fx.addresses.other, value: parseEther('0.05') })).wait();
    assert.match((await evmSweepSender.stale!(network, config, p)) ?? '', /no longer holds the planned amount/);
    const refused = await evmSweepSender.broadcast(network, config, signed!);
    assert.equal(refused.accepted, false);
    assert.match((refused as { error: string }).error, /nonce/i);
    assert.equal((await evmSweepSender.status(network, config, signed!.txid)).state, 'unknown');
    const garbage = await evmSweepSender.broadcast(network, config, { id: 'tx-0', raw: '0x02deadbeef', txid: `0x${'11'.repeat(32)}` });
    assert.equal(garbage.accepted, false);
  });

  test('without EIP-7702 the fee payer tops each token deposit up with exactly its gas reserve, then the deposit transfers', async (t) => {
    const noSetCode = { ...network, eip7702: false };
    await token(fx.usdt).send(depositAddress(7), usdc('3'));
    await token(fx.usdc).send(depositAddress(8), usdc('2'));
    await (await fx.payer.sendTransaction({ to: depositAddress(9), value: parseEther('0.2') })).wait();
    const coldUsdtBefore = await token(fx.usdt).balance(cold);
    const p = await plan([7, 8, 9].map(candidate), { net: noSetCode });
    const kinds = p.transactions.map((tx) => `${(tx.payload as { kind: string }).kind}${tx.after.length ? `<${tx.after.join(',')}` : ''}`);
    assert.deepEqual(kinds, ['top-up', 'token<tx-0', 'top-up', 'token<tx-2', 'native']);
    const signed = signOffline(p);
    const gas = await broadcastAll(signed);
    t.diagnostic(`top-up path gas: ${p.transactions.map((tx) => `${tx.id} ${(tx.payload as { kind: string }).kind} ${gas.get(tx.id)}`).join(', ')}`);
    assert.equal(await token(fx.usdt).balance(cold), coldUsdtBefore + usdc('3'));
    for (const i of [7, 8]) {
      assert.equal(await token(fx.usdt).balance(depositAddress(i)), 0n);
      assert.equal(await token(fx.usdc).balance(depositAddress(i)), 0n);
      const left = p.deposits.find((d) => d.address === depositAddress(i))!.leftBehind[0]!;
      assert.equal(left.holding.symbol, 'ETH');
      assert.ok((await eth(depositAddress(i))) > 0n, 'the unspent gas reserve stays, and the plan says so');
    }
    const native = p.deposits.find((d) => d.address === depositAddress(9))!;
    assert.equal(BigInt(native.moves[0]!.amount) + BigInt(native.fee), parseEther('0.2'));
    assert.ok((await eth(depositAddress(9))) < BigInt(native.fee));

    // A top-up larger than the transfers after it can spend is refused by the signer.
    const greedy = structuredClone(p);
    (greedy.transactions[0]!.payload as { value: string }).value = parseEther('5').toString();
    assert.throws(() => signOffline(greedy), /more than the transfers after it can spend/);
    const elsewhere = structuredClone(p);
    (elsewhere.transactions[0]!.payload as { to: string }).to = attacker;
    assert.throws(() => signOffline(elsewhere), /not one of the plan's deposits/);
  });
});
