import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Contract, HDNodeWallet, Mnemonic, parseEther, Wallet } from 'ethers';
import { formatUnits, parseUnits } from '../../src/domain/money.ts';
import { validateAddress } from '../../src/families/families.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn } from '../helpers/bitcoin-pool.ts';
import { waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startEvmWorld } from '../helpers/evm-world.ts';

// EVM refunds end to end (issue 45) on a Hardhat chain posing as ethereum mainnet, read by the real
// `chaingate index ethereum` process: buyers pay through the hosted checkout, the indexer completes
// the payments, and `refund plan` / `sweep sign` / `refund broadcast --wait` pay them back.
// - USDT refunded in full with --fee-payer: the fee payer's gas top-up to the deposit is the
//   deployment's own money (OWN, no payment.late_funds), and the payment reaches REFUNDED.
// - ETH over-paid, refunded in two steps (the over-payment, its fee from what stays on the deposit;
//   then the rest): what the store offers after the first is exactly what the deposit holds (the fee
//   counted as the chain charged it, gas used × price), and the second reaches REFUNDED.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const account = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(PHRASE).computeSeed()).derivePath("m/44'/60'/0'");
const FEE_PAYER = account.deriveChild(1).deriveChild(0).address;
const json = <T>(text: string): T => JSON.parse(text) as T;

test('evm refunds through the CLI with a real indexer: USDT with --fee-payer (top-up OWN) and ETH in two steps reach REFUNDED', async (t) => {
  const w = await startEvmWorld(t, { dialect: 'sqlite', confirmations: 2 });
  const { node, fx, d } = w;
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-evm-'));
  const env = { ...w.env, CHAINGATE_CONFIG: writeConfigFile({ chains: w.chains, indexer: w.indexerConfig, log: { level: 'warn' } }) };
  const { ok, refused } = cliIn(env, dir);
  await ok(['wallets', 'seed', '--chain', 'ethereum', '--xpub', account.neuter().extendedKey, '--count', '2']);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  await (await fx.deployer.sendTransaction({ to: FEE_PAYER, value: parseEther('10') })).wait();

  const em = () => d.common.db.em();
  const payment = (id: string) => em().findOneOrFail(Payment, { id }, { refresh: true });
  const rows = (address: string) => em().find(ObservedTransfer, { toAddress: address }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const events = async (id: string) => (await em().find(WebhookEvent, { paymentId: id }, { refresh: true })).map((e) => e.type);
  const checkout = async (coin: 'ETH' | 'USDT') => {
    const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `evm-refund-${coin}`, amount: '2500', currency: 'USD' });
    const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: coin });
    assert.equal(co.status, 201, co.text);
    return co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  };
  const proc = w.startIndexer();
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);
  const usdt = await checkout('USDT');
  const eth = await checkout('ETH');
  const usdtAmount = parseUnits(usdt.amount, 6);
  await ((await (fx.usdt.connect(fx.payer) as Contract).getFunction('transfer')(usdt.paymentAddress, usdtAmount)) as { wait(): Promise<unknown> }).wait();
  const over = parseEther('0.1');
  const ethPaid = parseUnits(eth.amount, 18) + over;
  await (await fx.payer.sendTransaction({ to: eth.paymentAddress, value: ethPaid })).wait();

  const mining = setInterval(() => void node.mine(1).catch(() => {}), 250); // confirmations for the indexer and for --wait
  t.after(() => clearInterval(mining));
  const until = (what: string, id: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 30_000).catch(async (err: unknown) => {
      const p = await payment(id);
      throw new Error(`${String(err)}\npayment ${p.status}; transfers ${JSON.stringify((await rows(p.address)).map((r) => [r.status, r.amount, r.fromAddress, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  await until('USDT payment COMPLETED', usdt.id, async () => (await payment(usdt.id)).status === 'COMPLETED');
  await until('ETH payment COMPLETED', eth.id, async () => (await payment(eth.id)).status === 'COMPLETED');
  assert.equal((await payment(eth.id)).receivedAmount, formatUnits(ethPaid, 18));

  const signAndSend = async (name: string, planArgs: string[], to: string) => {
    const planFile = join(dir, `${name}.json`);
    const planned = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', ...planArgs, '--to', to, '--out', planFile, '--json'])).stdout).plan;
    const signedFile = join(dir, `${name}.signed.json`);
    await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', to, '--yes']);
    assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout).done, true);
    return planned;
  };
  const balance = (a: string) => node.provider.getBalance(a);
  const tokenOf = async (a: string) => (await fx.usdt.getFunction('balanceOf')(a)) as bigint;

  // 1. USDT: the whole payment back, the fee payer topping the deposit up with gas.
  const usdtBuyer = Wallet.createRandom().address;
  const usdtPlan = await signAndSend('usdt', ['--payment', usdt.id, '--amount', usdt.amount, '--fee-payer', FEE_PAYER], usdtBuyer);
  assert.deepEqual(usdtPlan.transactions.map((x) => (x.payload as { kind: string }).kind), ['top-up', 'token']);
  assert.equal(await tokenOf(usdtBuyer), usdtAmount, 'the buyer has the whole payment back');
  await until('the top-up recorded OWN', usdt.id, async () => (await rows(usdt.paymentAddress)).some((r) => r.status === 'OWN'));
  await until('USDT payment REFUNDED', usdt.id, async () => (await payment(usdt.id)).status === 'REFUNDED');
  const topUp = BigInt((usdtPlan.transactions[0]!.payload as { value: string }).value);
  assert.deepEqual(
    (await rows(usdt.paymentAddress)).filter((r) => r.status !== 'CREDITED').map((r) => [r.status, r.amount, r.fromAddress, r.paymentId]),
    [['OWN', topUp.toString(), validateAddress('evm', FEE_PAYER, false), usdt.id]],
    'only the top-up besides the payment: OWN, from the fee payer as the chain\'s address rules write it',
  );
  // The fee payer's own ETH sent to the deposit outside any plan (an operator's manual top-up): OWN by its sender.
  const manual = await (await account.deriveChild(1).deriveChild(0).connect(node.provider).sendTransaction({ to: usdt.paymentAddress, value: parseEther('0.001') })).wait();
  await until('the manual top-up recorded OWN', usdt.id, async () => (await rows(usdt.paymentAddress)).some((r) => r.txHash === manual!.hash && r.status === 'OWN'));
  assert.match((await rows(usdt.paymentAddress)).find((r) => r.txHash === manual!.hash)!.note ?? '', /^from the fee payer of plan /);
  assert.equal((await payment(usdt.id)).status, 'REFUNDED');
  const usdtEvents = await events(usdt.id);
  assert.ok(!usdtEvents.includes('payment.late_funds'), `no late funds announced: ${usdtEvents.join(', ')}`);
  assert.equal(usdtEvents.filter((e) => e === 'payment.refunded').length, 1, usdtEvents.join(', '));

  // 2. ETH, first the over-payment: the buyer receives 0.1 ETH, the fee comes out of what stays.
  const ethBuyer = Wallet.createRandom().address;
  const first = await signAndSend('eth-over', ['--payment', eth.id], ethBuyer);
  assert.equal(first.refund!.amount, over.toString());
  assert.equal(await balance(ethBuyer), over);
  assert.equal((await payment(eth.id)).status, 'COMPLETED', 'a partial refund leaves the payment as it was');
  // What the store offers now is what the deposit holds: the fee as the chain charged it, not as planned.
  const left = await balance(eth.paymentAddress);
  const firstFee = BigInt(first.deposits[0]!.fee);
  assert.ok(ethPaid - over - left < firstFee, 'the chain charged less than the planned bound');
  await refused(['refund', 'plan', '--payment', eth.id, '--to', ethBuyer, '--amount', eth.amount, '--out', join(dir, 'x.json')], new RegExp(`at most ${formatUnits(left, 18).replace('.', '\\.')} ETH can be refunded$`, 'm'));
  // Then the rest: a full refund from the deposit, its fee out of the refund.
  const second = await signAndSend('eth-rest', ['--payment', eth.id, '--amount', formatUnits(left, 18)], ethBuyer);
  const secondFee = BigInt(second.deposits[0]!.fee);
  assert.equal(await balance(ethBuyer), over + left - secondFee, 'the buyer received the rest less its fee bound');
  await until('ETH payment REFUNDED', eth.id, async () => (await payment(eth.id)).status === 'REFUNDED');
  const ethEvents = await events(eth.id);
  assert.ok(!ethEvents.includes('payment.late_funds'), ethEvents.join(', '));
  assert.equal(ethEvents.filter((e) => e === 'payment.refunded').length, 1, ethEvents.join(', '));
  assert.deepEqual((await rows(eth.paymentAddress)).map((r) => r.status), ['CREDITED'], 'the refunds left nothing on the ledger of the deposit');
  const list = json<{ paymentId: string; state: string }[]>((await ok(['refund', 'list', '--payment', eth.id, '--json'])).stdout);
  assert.deepEqual(list.map((r) => r.state), ['CONFIRMED', 'CONFIRMED']);
});
