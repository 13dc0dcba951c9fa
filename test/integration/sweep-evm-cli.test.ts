import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Contract, getAddress, HDNodeWallet, Mnemonic, parseEther, parseUnits, Transaction, Wallet } from 'ethers';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { deployFixtures } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode } from '../../src/devnet/hardhat-node.ts';
import type { PaymentStatus } from '../../src/domain/lifecycle.ts';
import { CREATE2_DEPLOYER, delegationCode, SWEEPER_ABI, SWEEPER_ADDRESS } from '../../src/families/evm/sweep-payload.ts';
import type { SignedSweep, SweepPlan } from '../../src/families/sweep.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { formatUnits } from '../../src/domain/money.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';
import { startRpcProxy } from '../helpers/rpc-proxy.ts';
import { type Forgery, refusesForgeries } from '../helpers/forged-signed.ts';

// The EVM sweep through the real binary on SQLite (docs/sweeps/evm.md), on a real Hardhat node
// (EDR, Osaka: EIP-7702) configured as the ethereum testnet's DEVNET: `sweep plan` reads the
// ledger and the node, `sweep sign` signs from a 0600 seed file (the fee payer is the pool
// account's first change address), `sweep broadcast --wait` deploys the Sweeper and sends the
// fee payer's type-4 batch, `sweep list` / `sweep show` report it. The module-level cases are in
// test/integration/sweep-evm.test.ts.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const account = HDNodeWallet.fromSeed(Mnemonic.fromPhrase(PHRASE).computeSeed()).derivePath("m/44'/60'/0'");
const XPUB = account.neuter().extendedKey;
const FEE_PAYER = account.deriveChild(1).deriveChild(0).address;
const COLD = getAddress('0x000000000000000000000000000000000000c01d');
const ATTACKER = getAddress('0x00000000000000000000000000000000bad0bad0');
/** github.com/Arachnid/deterministic-deployment-proxy, as every public EVM chain has it (see sweep-evm.test.ts). */
const PROXY_DEPLOYMENT_TX =
  '0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222';
const PROXY_DEPLOYER = '0x3fab184622dc19b6109349b94811493bf2a45362';
const json = <T>(text: string): T => JSON.parse(text) as T;
const usd = (n: string) => parseUnits(n, 6);

test('evm sweep through the CLI on Hardhat: plan, sign offline, deploy the Sweeper then one 7702 batch, list; payments keep their statuses', async (t) => {
  const node = await startHardhatNode();
  t.after(() => node.stop());
  const fx = await deployFixtures(node);
  await (await fx.deployer.sendTransaction({ to: PROXY_DEPLOYER, value: parseEther('0.01') })).wait();
  await node.send('eth_sendRawTransaction', [PROXY_DEPLOYMENT_TX]);
  assert.notEqual(await node.provider.getCode(CREATE2_DEPLOYER), '0x');
  await (await fx.deployer.sendTransaction({ to: FEE_PAYER, value: parseEther('10') })).wait();
  // The CLI talks to the node through a counting proxy: what it sends is visible here.
  const rpc = await startRpcProxy({ target: node.url });
  t.after(() => rpc.close());

  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-evm-'));
  const tokens = { USDC: { address: fx.addresses.usdc, decimals: 6 }, USDT: { address: fx.addresses.usdt, decimals: 6 } };
  const config = writeConfigFile({ chains: { ethereum: { testnet: { network: 'DEVNET', rpcUrl: rpc.url, confirmations: 1, blockTimeMs: 400, tokens } } }, log: { level: 'warn' } });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
  const ok = async (args: string[]) => {
    const r = await runCli(args, env, { cwd: dir });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r;
  };

  const merchant = json<{ id: string }>((await ok(['merchant', 'create', '--name', 'Acme', '--json'])).stdout);
  await ok(['wallets', 'seed', '--chain', 'ethereum', '--testnet', '--xpub', XPUB, '--count', '3']);
  const db = await openDatabase(tdb.url);
  t.after(() => db.close());
  const em = db.em();
  const pool = await em.find(WalletAddress, { chain: 'ethereum', isTestnet: true }, { orderBy: { derivationIndex: 'asc' } });
  const [d0, d1, d2] = pool.map((w) => w.address);
  assert.deepEqual([d0, d1, d2], [0, 1, 2].map((i) => account.deriveChild(0).deriveChild(i).address));
  const invoice = paidInvoice(em, merchant.id, 'INV-SWEEP-EVM-0001');
  const statuses: PaymentStatus[] = ['COMPLETED', 'EXPIRED', 'PENDING'];
  for (const [i, status] of statuses.entries()) {
    const p = em.create(Payment, {
      referenceId: `PAY-SWEEP-EVM-000${i}`, invoice, merchant: em.getReference(MerchantPoint, merchant.id), status, blockchain: 'ethereum', network: 'DEVNET', isTestnet: true,
      cryptoCurrency: 'USDC', decimals: 6, tokenAddress: fx.addresses.usdc, amount: '100', expectedAmount: '100', receivedAmount: '0', address: pool[i]!.address, requiredConfirmations: 1,
      transactionHash: null, blockNumber: null, contractAddress: null, externalId: null, externalIdUuid: null, metadata: {}, expiresAt: new Date(Date.now() - 60_000), completedAt: null,
    });
    await em.flush();
    await em.nativeUpdate(WalletAddress, { id: pool[i]!.id }, { status: 'LEASED', paymentId: p.id, leasedAt: new Date() });
  }
  const token = (c: Contract) => ({
    balance: async (a: string) => (await c.getFunction('balanceOf')(a)) as bigint,
    send: async (to: string, amount: bigint) => (await (await (c.connect(fx.payer) as Contract).getFunction('transfer')(to, amount)).wait()),
  });
  const [usdc, usdt] = [token(fx.usdc), token(fx.usdt)];
  const eth = (a: string) => node.provider.getBalance(a);
  await usdc.send(d0!, usd('100')); // tokens only, no ETH for gas
  await usdt.send(d0!, usd('50'));
  await (await fx.payer.sendTransaction({ to: d1!, value: parseEther('1.5') })).wait(); // a late ETH payment to an expired invoice
  await usdc.send(d1!, usd('5'));
  await usdc.send(d2!, usd('9')); // leased to an open payment: never swept

  const planFile = join(dir, 'plan.json');
  const planned = json<{ plan: SweepPlan; totals: { moves: Record<string, string> } }>(
    (await ok(['sweep', 'plan', '--chain', 'ethereum', '--testnet', '--to', COLD, '--fee-payer', FEE_PAYER, '--out', planFile, '--json'])).stdout,
  );
  const plan = planned.plan;
  assert.equal(plan.network, 'DEVNET');
  assert.deepEqual(plan.deposits.map((d) => d.derivationIndex), [0, 1]);
  assert.deepEqual(planned.totals.moves, { USDC: '105000000', USDT: '50000000', ETH: parseEther('1.5').toString() });
  assert.ok(plan.skipped.some((s) => s.address === d2 && /open payment \(PENDING\)/.test(s.reason)), JSON.stringify(plan.skipped));
  assert.deepEqual(plan.transactions.map((x) => (x.payload as { kind: string }).kind), ['deploy-sweeper', '7702-batch']);
  assert.deepEqual(plan.transactions[1]!.after, ['tx-0']);

  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const signedFile = join(dir, 'signed.json');
  const sendsBefore = rpc.stats.methods.eth_sendRawTransaction ?? 0;
  const signing = await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--yes', '--expect-to', COLD]);
  assert.match(signing.stderr, /105 USDC/);
  assert.equal(rpc.stats.methods.eth_sendRawTransaction ?? 0, sendsBefore, 'signing sends nothing');

  // The summary `sweep sign` printed is what the signed bytes do: each line equals ethers' own reading of
  // the raw, the batch's amounts being the balances the chain holds on each deposit it sweeps.
  const signedFile0 = json<SignedSweep>(readFileSync(signedFile, 'utf8'));
  const symbolOf = new Map([[getAddress(fx.addresses.usdc), 'USDC'], [getAddress(fx.addresses.usdt), 'USDT']]);
  const expectedLines: string[] = [];
  for (const s of signedFile0.transactions) {
    const tx = Transaction.from(s.raw);
    const pays: string[] = [];
    let ethMoved = 0n;
    if (tx.to === SWEEPER_ADDRESS) {
      const [orders] = SWEEPER_ABI.decodeFunctionData('sweepMany', tx.data) as unknown as [{ deposit: string; to: string; tokens: string[] }[]];
      for (const o of orders) {
        const native = await eth(o.deposit);
        if (native > 0n) pays.push(`${formatUnits(native, 18)} ETH to ${o.to}`);
        ethMoved += native;
        for (const t of o.tokens) pays.push(`${formatUnits(await token(t === getAddress(fx.addresses.usdc) ? fx.usdc : fx.usdt).balance(o.deposit), 6)} ${symbolOf.get(t)} (token ${t}) to ${o.to}`);
      }
    } else {
      assert.equal(tx.to, CREATE2_DEPLOYER);
      assert.equal(tx.value, 0n);
    }
    // The fee's share of the ETH the transaction moves, in hundredths of a percent, rounded down.
    const fee = tx.gasLimit * tx.maxFeePerGas!;
    const bp = ethMoved === 0n ? null : (fee * 10_000n) / ethMoved;
    const share = bp === null ? '' : ` (${bp / 100n}.${(bp % 100n).toString().padStart(2, '0')} % of the ETH it moves)`;
    expectedLines.push(`  ${s.id}: pays ${pays.join(' + ') || 'nothing'}; fee at most ${formatUnits(fee, 18)} ETH${share} paid by ${tx.from}`);
  }
  const printed = signing.stderr.split('\n').filter((l) => /^ {2}tx-\d+: /.test(l));
  assert.deepEqual(printed, expectedLines, signing.stderr);

  // A plan file whose batch may burn a thousand times its fee, the summary and the id rewritten to agree: refused, nothing signed.
  const burning = structuredClone(plan);
  const batchPayload = burning.transactions[1]!.payload as { maxFeePerGas: string; maxPriorityFeePerGas: string };
  const burnt = BigInt(batchPayload.maxFeePerGas) * 1000n;
  const extra = BigInt((burning.transactions[1]!.payload as { gasLimit: string }).gasLimit) * (burnt - BigInt(batchPayload.maxFeePerGas));
  Object.assign(batchPayload, { maxFeePerGas: burnt.toString(), maxPriorityFeePerGas: burnt.toString() });
  burning.deposits[0]!.fee = (BigInt(burning.deposits[0]!.fee) + extra).toString();
  const burningFile = join(dir, 'burning.json');
  writeFileSync(burningFile, JSON.stringify({ ...burning, id: planId(burning) }));
  const refusedSign = await runCli(['sweep', 'sign', '--plan', burningFile, '--out', join(dir, 'burning-signed.json'), '--seed-file', seedFile, '--yes', '--expect-to', COLD], env, { cwd: dir });
  assert.equal(refusedSign.code, 2, refusedSign.stderr);
  assert.match(refusedSign.stderr, /the transactions can pay [\d.]+ ETH in fees, more than 0\.005 ETH per deposit moved \(2\): refused, nothing signed/);
  assert.equal(existsSync(join(dir, 'burning-signed.json')), false);

  // Signed files that are not what was signed: a forged txid, a raw of another transaction, a damaged raw.
  // Each is refused before anything is recorded or sent; the genuine file goes through afterwards.
  const feePayerNonce = await node.provider.getTransactionCount(FEE_PAYER);
  // The fee payer's key, signing at the batch's own nonce a payment of 1 ETH to a stranger.
  const strangerTx = Transaction.from({ type: 2, chainId: 31_337n, nonce: (plan.transactions[1]!.payload as { nonce: number }).nonce, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n, to: ATTACKER, value: parseEther('1') });
  strangerTx.signature = new Wallet(account.deriveChild(1).deriveChild(0).privateKey).signingKey.sign(strangerTx.unsignedHash);
  const forgeries: Forgery[] = [
    ['forged-txid', (t) => { t[1]!.txid = t[0]!.txid; }, /tx-1's raw transaction hashes to 0x[0-9a-f]{64}, not the txid 0x[0-9a-f]{64} the file names/],
    ['other-raw', (t) => { t[1]!.raw = strangerTx.serialized; t[1]!.txid = strangerTx.hash!; }, /tx-1: the signed transaction's gas limit is 21000, the plan's \d+: not this plan's transaction/],
    ['swapped', (t) => { [t[0]!.raw, t[1]!.raw, t[0]!.txid, t[1]!.txid] = [t[1]!.raw, t[0]!.raw, t[1]!.txid, t[0]!.txid]; }, /tx-0: the signed transaction's/],
    ['damaged', (t) => { t[1]!.raw = '00'; }, /tx-1: the signed raw is not 0x-prefixed hex bytes/],
  ];
  const sentBefore = rpc.stats.methods.eth_sendRawTransaction ?? 0;
  await refusesForgeries({
    genuine: signedFile0,
    forgeries,
    dir,
    env,
    nothingSent: async (name) => {
      assert.equal(rpc.stats.methods.eth_sendRawTransaction ?? 0, sentBefore, `${name}: nothing sent`);
      assert.equal(await node.provider.getTransactionCount(FEE_PAYER), feePayerNonce, `${name}: the chain is unchanged`);
    },
  });
  const none = json<{ planId: string; txs: unknown[] }[]>((await ok(['sweep', 'list', '--chain', 'ethereum', '--json'])).stdout).find((p) => p.planId === plan.id);
  assert.equal(none?.txs.length ?? 0, 0, 'nothing recorded for the refused files');

  const feePayerBefore = await eth(FEE_PAYER);
  const sent = json<{ done: boolean; transactions: { id: string; status: string }[] }>((await ok(['sweep', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
  assert.equal(sent.done, true);
  assert.deepEqual(sent.transactions.map((x) => x.status), ['FINAL', 'FINAL']);
  assert.equal(await usdc.balance(COLD), usd('105'));
  assert.equal(await usdt.balance(COLD), usd('50'));
  assert.equal(await eth(COLD), parseEther('1.5'));
  for (const d of [d0!, d1!]) {
    assert.equal(await usdc.balance(d), 0n);
    assert.equal(await usdt.balance(d), 0n);
    assert.equal(await eth(d), 0n);
    assert.equal((await node.provider.getCode(d)).toLowerCase(), delegationCode(SWEEPER_ADDRESS));
  }
  assert.equal(await usdc.balance(d2!), usd('9'), 'the open payment\'s deposit is untouched');
  assert.equal(await node.provider.getCode(d2!), '0x');
  assert.ok((await eth(FEE_PAYER)) < feePayerBefore, 'the fee payer paid the gas');

  // Broadcasting again sends nothing: both are final.
  const sends = rpc.stats.methods.eth_sendRawTransaction ?? 0;
  const nonce = await node.provider.getTransactionCount(FEE_PAYER);
  assert.ok(sends - sendsBefore >= 2, `sent ${sends - sendsBefore}`);
  await ok(['sweep', 'broadcast', '--signed', signedFile]);
  assert.equal(rpc.stats.methods.eth_sendRawTransaction ?? 0, sends, 'never sent twice');
  assert.equal(await node.provider.getTransactionCount(FEE_PAYER), nonce);

  const list = json<{ planId: string; txs: { status: string }[] }[]>((await ok(['sweep', 'list', '--chain', 'ethereum', '--json'])).stdout);
  assert.deepEqual(list.find((p) => p.planId === plan.id)!.txs.map((x) => x.status), ['FINAL', 'FINAL']);
  const signedTxs = json<{ transactions: { txid: string }[] }>(readFileSync(signedFile, 'utf8')).transactions;
  assert.match((await ok(['sweep', 'show', signedTxs[1]!.txid])).stdout, /FINAL/);
  const after = await db.em().find(Payment, {}, { orderBy: { referenceId: 'asc' } });
  assert.deepEqual(after.map((p) => p.status), statuses);
});
