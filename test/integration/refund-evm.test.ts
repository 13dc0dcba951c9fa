/**
 * EVM refunds on a real Hardhat 3 node (EDR, Osaka: EIP-7702 runs), one node for every case: the
 * family's planner (server) builds a refund plan of one exact amount from one address, the offline
 * signer signs it from the test seed, the sender broadcasts it; the buyer's balance rises by what
 * the plan says and everything else stays on the address. Through modules, not the CLI: the
 * `refund` commands are the core's (src/sweep/).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Contract, getAddress, parseEther, parseUnits, Transaction, Wallet } from 'ethers';
import type { ResolvedNetwork } from '../../src/chains/registry.ts';
import type { Config } from '../../src/config/schema.ts';
import { deployFixtures, type EvmFixtures } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode, type HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { evmSweepPlanner } from '../../src/families/evm/sweep-plan.ts';
import { delegationCode, ERC20_ABI, SWEEPER_ADDRESS } from '../../src/families/evm/sweep-payload.ts';
import { evmSweepSender } from '../../src/families/evm/sweep-send.ts';
import { evmSweepSigner } from '../../src/families/evm/sweep-sign.ts';
import type { RefundAsk, SignedSweepTx, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { createLogger } from '../../src/logger.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { accountNode, broadcastAll, candidate, depositAddress, feePayer, prepareSweepChain, seedBytes, signOffline, token as fixtureToken } from '../helpers/evm-sweep.ts';

let node: HardhatNode;
let fx: EvmFixtures;
let config: Config;
let network: ResolvedNetwork;
const log = createLogger('silent');
const attacker = getAddress('0x00000000000000000000000000000000bad0bad0');
const cold = getAddress('0x000000000000000000000000000000000000c01d');

type Coin = 'ETH' | 'USDT' | 'USDC';

function ask(coin: Coin, amount: bigint): RefundAsk {
  if (coin === 'ETH') return { symbol: 'ETH', token: null, decimals: 18, amount };
  return { symbol: coin, token: getAddress(coin === 'USDT' ? fx.addresses.usdt : fx.addresses.usdc), decimals: 6, amount };
}

/** What the core's `refund plan` does with the family's planner: one candidate, the buyer as `to`, the refund terms. */
async function refundPlan(from: SweepCandidate, coin: Coin, amount: bigint, options: { to?: string; feePayer?: string | null; net?: ResolvedNetwork } = {}): Promise<SweepPlan> {
  const to = options.to ?? Wallet.createRandom().address;
  const payer = options.feePayer === undefined ? feePayer : options.feePayer;
  const refund = ask(coin, amount);
  const part = await evmSweepPlanner.plan({ network: options.net ?? network, config, log, candidates: [from], to, feePayer: payer, min: {}, refund });
  const plan: Omit<SweepPlan, 'id'> = {
    format: 'chaingate-sweep-plan/1',
    kind: 'refund',
    chain: 'ethereum',
    family: 'evm',
    network: network.network,
    testnet: true,
    to,
    feePayer: payer,
    createdAt: new Date().toISOString(),
    refund: { paymentId: 'pay-refund-test', symbol: refund.symbol, token: refund.token, decimals: refund.decimals, amount: amount.toString() },
    ...part,
  };
  for (const l of plan.deposits[0]?.leftBehind ?? []) assert.match(l.reason, /^not refunded: /);
  return { ...plan, id: planId(plan) };
}

/** Offline signing, then what `refund broadcast` does: the family's stale-plan check before the first send, then every transaction in order. */
async function signAndSend(plan: SweepPlan): Promise<SignedSweepTx[]> {
  const signed = signOffline(plan);
  assert.equal(await evmSweepSender.stale!(network, config, plan), null, 'the plan is still good before the first send');
  await broadcastAll({ node, network, config }, signed);
  return signed;
}
const token = (c: Contract) => fixtureToken(fx, c);
const eth = (a: string) => node.provider.getBalance(a);
const usd = (n: string) => parseUnits(n, 6);
const kinds = (p: SweepPlan) => p.transactions.map((tx) => `${(tx.payload as { kind: string }).kind}${tx.after.length ? `<${tx.after.join(',')}` : ''}`);
/** What the chain charged the sender of a transaction (gas used × effective price). */
const paid = async (txid: string) => (await node.provider.getTransactionReceipt(txid))!.fee;
/** A transaction's fee bound: gas limit × max fee per gas. */
const maxCost = (p: SweepPlan, i: number) => {
  const payload = p.transactions[i]!.payload as { gasLimit: string; maxFeePerGas: string };
  return BigInt(payload.gasLimit) * BigInt(payload.maxFeePerGas);
};
const fund = async (to: string, value: bigint) => (await fx.payer.sendTransaction({ to, value })).wait();

describe('EVM refunds on Hardhat (Osaka: EIP-7702)', () => {
  before(async () => {
    node = await startHardhatNode();
    fx = await deployFixtures(node);
    ({ config, network } = await prepareSweepChain(node, fx));
    assert.equal(network.eip7702, true);
  });
  after(() => node?.stop());

  test('a USDT overpayment refunded with a fee payer: a top-up of the gas, then exactly the refund; the rest stays (with and without EIP-7702)', async () => {
    for (const [i, net] of [[0, network], [1, { ...network, eip7702: false }]] as const) {
      const deposit = depositAddress(i);
      await token(fx.usdt).send(deposit, usd('30'));
      await token(fx.usdc).send(deposit, usd('3'));
      const p = await refundPlan(candidate(i), 'USDT', usd('10'), { net });
      // The Sweeper moves whole balances, so a refund never takes the 7702 batch, even where it runs.
      assert.deepEqual(kinds(p), ['top-up', 'token<tx-0'], `eip7702 ${net.eip7702}`);
      const [d] = p.deposits;
      // The fee states what both transactions can cost, though the fee payer pays it all.
      assert.equal(d!.fee, (maxCost(p, 0) + maxCost(p, 1)).toString());
      assert.deepEqual(d!.moves, [{ symbol: 'USDT', token: getAddress(fx.addresses.usdt), decimals: 6, amount: usd('10').toString() }]);
      assert.deepEqual(
        d!.leftBehind.map((l) => [l.holding.symbol, l.holding.symbol === 'ETH' ? 'some' : l.holding.amount]),
        [['ETH', 'some'], ['USDT', usd('20').toString()], ['USDC', usd('3').toString()]],
      );

      const feePayerBefore = await eth(feePayer);
      const signed = await signAndSend(p);
      assert.equal(await token(fx.usdt).balance(p.to), usd('10'), 'the buyer received exactly the refund');
      assert.equal(await token(fx.usdt).balance(deposit), usd('20'), 'the overpayment beyond the refund stays');
      assert.equal(await token(fx.usdc).balance(deposit), usd('3'), 'other tokens stay');
      const topUp = BigInt((p.transactions[0]!.payload as { value: string }).value);
      assert.equal(await eth(deposit), topUp - (await paid(signed[1]!.txid)), "the unspent part of the top-up stays; the deposit's own ETH paid nothing");
      assert.equal(await eth(feePayer), feePayerBefore - topUp - (await paid(signed[0]!.txid)), 'the fee payer paid the top-up and its gas');
    }
  });

  test('a full USDT refund without a fee payer is paid from the deposit\'s own ETH; without ETH it is refused', async () => {
    const deposit = depositAddress(2);
    await token(fx.usdt).send(deposit, usd('25'));
    await assert.rejects(refundPlan(candidate(2), 'USDT', usd('25'), { feePayer: null }), (err: Error) => {
      assert.ok(err instanceof UsageError);
      assert.match(err.message, /holds 0 ETH, less than the up to [\d.]+ ETH its USDT transfer's gas may cost: plan with --fee-payer/);
      return true;
    });
    await fund(deposit, parseEther('0.01'));
    const p = await refundPlan(candidate(2), 'USDT', usd('25'), { feePayer: null });
    assert.deepEqual(kinds(p), ['token']);
    const payload = p.transactions[0]!.payload as { gasLimit: string; maxFeePerGas: string };
    assert.equal(p.deposits[0]!.fee, (BigInt(payload.gasLimit) * BigInt(payload.maxFeePerGas)).toString());
    assert.deepEqual(p.deposits[0]!.leftBehind.map((l) => l.holding.symbol), ['ETH']);
    const signed = await signAndSend(p);
    assert.equal(await token(fx.usdt).balance(p.to), usd('25'));
    assert.equal(await token(fx.usdt).balance(deposit), 0n);
    assert.equal(await eth(deposit), parseEther('0.01') - (await paid(signed[0]!.txid)));
  });

  test('a native ETH overpayment refunded by the deposit itself: the buyer gets the refund, the fee comes out of what stays', async () => {
    const deposit = depositAddress(3);
    await fund(deposit, parseEther('1'));
    const p = await refundPlan(candidate(3), 'ETH', parseEther('0.4'), { feePayer: null });
    assert.deepEqual(kinds(p), ['native']);
    assert.equal(p.deposits[0]!.moves[0]!.amount, parseEther('0.4').toString());
    assert.ok(BigInt(p.deposits[0]!.fee) > 0n);
    const signed = await signAndSend(p);
    assert.equal(await eth(p.to), parseEther('0.4'));
    assert.equal(await eth(deposit), parseEther('0.6') - (await paid(signed[0]!.txid)));
  });

  test('a full native refund: without a fee payer the buyer receives the amount less the fee; with one, the whole amount', async () => {
    const alone = depositAddress(4);
    await fund(alone, parseEther('0.3'));
    const p = await refundPlan(candidate(4), 'ETH', parseEther('0.3'), { feePayer: null });
    assert.deepEqual(kinds(p), ['native']);
    const [d] = p.deposits;
    const fee = BigInt(d!.fee);
    assert.equal(BigInt(d!.moves[0]!.amount), parseEther('0.3') - fee);
    const signed = await signAndSend(p);
    assert.equal(await eth(p.to), parseEther('0.3') - fee, 'the buyer received amount − fee');
    assert.equal(await eth(alone), fee - (await paid(signed[0]!.txid)), 'what stays is the fee reserve the transfer did not spend');

    const helped = depositAddress(5);
    await fund(helped, parseEther('0.2'));
    const q = await refundPlan(candidate(5), 'ETH', parseEther('0.2'));
    assert.deepEqual(kinds(q), ['top-up', 'native<tx-0']);
    assert.equal(q.deposits[0]!.fee, (maxCost(q, 0) + maxCost(q, 1)).toString());
    const signedQ = await signAndSend(q);
    assert.equal(await eth(q.to), parseEther('0.2'), 'the fee payer paid: the buyer received the whole amount');
    const topUp = BigInt((q.transactions[0]!.payload as { value: string }).value);
    assert.equal(await eth(helped), topUp - (await paid(signedQ[1]!.txid)));
  });

  test('a refund larger than the address holds, or from more than one address, is refused by the planner', async () => {
    const deposit = depositAddress(6);
    await token(fx.usdt).send(deposit, usd('5'));
    await fund(deposit, parseEther('0.05'));
    const refused = async (plan: Promise<unknown>, message: RegExp) =>
      assert.rejects(plan, (err: Error) => {
        assert.ok(err instanceof UsageError, String(err));
        assert.match(err.message, message);
        return true;
      });
    await refused(refundPlan(candidate(6), 'USDT', usd('6')), new RegExp(`${deposit} holds 5 USDT, less than the refund of 6 USDT`));
    await refused(refundPlan(candidate(6), 'ETH', parseEther('0.06')), /holds 0.05 ETH, less than the refund of 0.06 ETH/);
    await refused(refundPlan(candidate(6), 'USDC', 1n), /holds 0 USDC, less than the refund of 0.000001 USDC/);
    await refused(
      evmSweepPlanner.plan({ network, config, log, candidates: [candidate(6), candidate(7)], to: attacker, feePayer, min: {}, refund: ask('USDT', 1n) }),
      /exactly one address, not 2/,
    );
    assert.equal(await token(fx.usdt).balance(deposit), usd('5'));
  });

  test('a refund from a merchant wallet address (no derivation index) is signed with the key the signer finds in the seed', async () => {
    // The merchant's wallet account m/44'/60'/0'/0/i (MetaMask's), here i = 15, after the deposit was swept.
    const wallet = accountNode.deriveChild(0).deriveChild(15).address;
    const from: SweepCandidate = { address: wallet, derivationIndex: null, source: 'wallet' };
    await token(fx.usdc).send(wallet, usd('40'));
    const p = await refundPlan(from, 'USDC', usd('12'));
    assert.equal(p.deposits[0]!.source, 'wallet');
    assert.equal(p.deposits[0]!.derivationIndex, null);
    assert.equal(evmSweepSigner.deriveKey(seedBytes, from, p, 20).address, wallet);
    assert.equal(evmSweepSigner.deriveKeyFromAccount!(accountNode.extendedKey, from, p, 20).address, wallet);
    // The fee payer, the pool account's change address, is found though the plan names no pool account.
    assert.equal(evmSweepSigner.deriveFeePayerKey!(seedBytes, p, 20).address, feePayer);
    assert.throws(() => evmSweepSigner.deriveKey(seedBytes, from, p, 10), /the wallet address 0x[0-9a-fA-F]{40} is none of this seed's m\/44'\/60'\/0'\/0\/i for i < 10/);
    assert.throws(() => evmSweepSigner.deriveKey(seedBytes, { ...from, address: attacker }, p, 20), /none of this seed's m\/44'\/60'\/0'\/0\/i for i < 20/);

    await signAndSend(p);
    assert.equal(await token(fx.usdc).balance(p.to), usd('12'));
    assert.equal(await token(fx.usdc).balance(wallet), usd('28'));
  });

  test('a deposit the Sweeper swept (still delegated) refunds a late payment with its own transfer', async () => {
    const deposit = depositAddress(10);
    await token(fx.usdc).send(deposit, usd('5'));
    const sweep = await evmSweepPlanner.plan({ network, config, log, candidates: [candidate(10)], to: cold, feePayer, min: {} });
    const sweepPlan: SweepPlan = { format: 'chaingate-sweep-plan/1', id: 'sweep', kind: 'sweep', chain: 'ethereum', family: 'evm', network: network.network, testnet: true, to: cold, feePayer, createdAt: new Date().toISOString(), ...sweep };
    assert.deepEqual(kinds(sweepPlan).at(-1), '7702-batch<tx-0');
    await signAndSend(sweepPlan);
    assert.equal((await node.provider.getCode(deposit)).toLowerCase(), delegationCode(SWEEPER_ADDRESS));

    await token(fx.usdt).send(deposit, usd('7'));
    const p = await refundPlan(candidate(10), 'USDT', usd('7'));
    assert.deepEqual(kinds(p), ['top-up', 'token<tx-0']);
    assert.ok(BigInt((p.transactions[0]!.payload as { gasLimit: string }).gasLimit) > 21_000n, "the top-up runs the Sweeper's receive");
    await signAndSend(p);
    assert.equal(await token(fx.usdt).balance(p.to), usd('7'));
    assert.equal(await token(fx.usdt).balance(deposit), 0n);
    assert.equal((await node.provider.getCode(deposit)).toLowerCase(), delegationCode(SWEEPER_ADDRESS), 'still delegated for the next sweep');
  });

  test('the signer refuses a tampered refund plan', async () => {
    const deposit = depositAddress(8);
    await token(fx.usdt).send(deposit, usd('8'));
    await fund(deposit, parseEther('0.5'));
    const p = await refundPlan(candidate(8), 'USDT', usd('3'));
    assert.deepEqual(kinds(p), ['top-up', 'token<tx-0']);
    const tamper = (edit: (plan: SweepPlan, transfer: Record<string, unknown>, topUp: Record<string, unknown>) => void, from = p): SweepPlan => {
      const copy = structuredClone(from);
      edit(copy, copy.transactions.at(-1)!.payload as Record<string, unknown>, copy.transactions[0]!.payload as Record<string, unknown>);
      return copy;
    };
    assert.throws(() => signOffline(tamper((_, x) => { x.amount = usd('8').toString(); })), /transfers 8000000 atomic USDT, but the refund is 3000000/);
    // The summary edited along with the payload: the refund terms still say 3 USDT.
    assert.throws(() => signOffline(tamper((plan, x) => { x.amount = usd('8').toString(); plan.deposits[0]!.moves[0]!.amount = usd('8').toString(); })), /but the refund is 3000000/);
    assert.throws(() => signOffline(tamper((_, x) => { x.token = getAddress(fx.addresses.usdc); })), /another token than the refund's USDT/);
    assert.throws(() => signOffline(tamper((_, __, t) => { t.to = attacker; })), /not one of the plan's deposits/);
    assert.throws(() => signOffline(tamper((_, __, t) => { t.value = parseEther('1').toString(); })), /more than the transfers after it can spend/);
    assert.throws(
      () => signOffline(tamper((plan) => { plan.transactions.push({ ...structuredClone(plan.transactions[1]!), id: 'tx-2', payload: { ...(plan.transactions[1]!.payload as object), nonce: 99 } }); })),
      /exactly one transfer besides gas top-ups, this one 2/,
    );
    assert.throws(
      () =>
        signOffline(tamper((plan, x) => {
          plan.transactions[1]!.payload = { kind: '7702-batch', chainId: x.chainId, from: feePayer, nonce: 5, gasLimit: '300000', maxFeePerGas: x.maxFeePerGas, maxPriorityFeePerGas: x.maxPriorityFeePerGas, sweeper: SWEEPER_ADDRESS, deadline: Math.floor(Date.now() / 1000) + 3600, orders: [{ deposit, tokens: [x.token], authNonce: 0, native: '0', amounts: [usd('3').toString()] }] };
        })),
      /a 7702-batch transaction cannot pay a refund of USDT/,
    );
    assert.throws(() => signOffline(tamper((plan) => { plan.kind = 'sweep'; })), /a plan of kind "sweep" with refund terms: refused/);
    assert.throws(() => signOffline(tamper((plan) => { delete plan.refund; })), /a plan of kind "refund" without refund terms: refused/);

    const native = await refundPlan(candidate(8), 'ETH', parseEther('0.1'), { feePayer: null });
    assert.throws(() => signOffline(tamper((_, x) => { x.value = parseEther('0.45').toString(); }, native)), /sends 450000000000000000 atomic ETH, but the refund is 100000000000000000/);
    assert.throws(() => signOffline(tamper((_, x) => { x.kind = 'token'; delete x.value; x.token = getAddress(fx.addresses.usdt); x.amount = '1'; }, native)), /transfers another token than the refund's ETH|cannot pay a refund of ETH/);

    // The buyer is the plan's `to` alone: the signer builds every call to it, and the plan's id covers it.
    const signed = signOffline(p);
    const transfer = Transaction.from(signed[1]!.raw);
    assert.deepEqual([...ERC20_ABI.decodeFunctionData('transfer', transfer.data)], [p.to, usd('3')]);
    assert.notEqual(planId({ ...p, to: attacker }), p.id);
  });
});
