import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { skipUnless } from '../helpers/databases.ts';
import { waitFor } from '../helpers/indexer-process.ts';
import { startLitesvmCluster } from '../helpers/litesvm-cluster.ts';
import { startSolanaWorld } from '../helpers/solana-world.ts';

// The Solana reader end to end on transactions Solana's real SVM executed (litesvm: the System,
// SPL Token, Token-2022, Associated Token Account and Address Lookup Table programs), served in
// Agave's getBlock / getTransaction / getSignaturesForAddress shapes (test/helpers/litesvm-cluster.ts),
// read by the real `chaingate index solana` process. What the chain records for a failed
// transaction, a new associated token account, a look-alike mint or a lookup-table recipient is
// what the runtime did, not what our reader expects.

const SOL_25_USD = 166_666_667n; // 25.00 USD at 150 USD/SOL, rounded up to 9 decimals
/** 13,456,789.123456789 SOL: an exchange wallet above 2^53 lamports, as mainnet has; a float would round it. */
const WHALE = 13_456_789_123_456_789n;

/** getBlock's raw answer text for a slot, as the reader receives it. */
async function rawBlock(url: string, slot: number): Promise<string> {
  const params = [slot, { encoding: 'json', transactionDetails: 'accounts', maxSupportedTransactionVersion: 0, rewards: false, commitment: 'confirmed' }];
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBlock', params }) });
  return res.text();
}

describe('solana indexer over litesvm (real SVM transactions, separate indexer process)', () => {
  test('blocks mode: SOL, USDC into a new and an existing associated token account, a v0 lookup-table recipient; a failed transfer and a look-alike mint are never credited', async (t) => {
    const cluster = await startLitesvmCluster();
    t.after(() => cluster.close());
    cluster.mine(3);
    const { d, proc, open, payment, waitStatus } = await startSolanaWorld(t, { dialect: 'sqlite', rpcUrl: cluster.url, mint: cluster.usdc.address, confirmations: 3, maxBlocksPerRange: 20, rpcTimeoutMs: 2000, poolSize: 5 });
    const credits = (txHash: string) => d.common.db.em().count(ObservedTransfer, { txHash, status: 'CREDITED' });

    await t.test('a SOL transfer is detected, counts its confirmations and completes on the finalized slot; a failed one, rolled back by the runtime, is not credited', async () => {
      const p = await open('SOL');
      assert.equal(p.amount, '0.166666667');
      // Pays the deposit, then a transfer the buyer cannot afford: the SVM fails the whole transaction.
      const failed = await cluster.sendSolThenFail(p.address, SOL_25_USD);
      assert.deepEqual(failed.rendered.meta.err, { InstructionError: [1, { Custom: 1 }] }, 'SystemError::ResultWithNegativeLamports from the System program');
      const at = failed.rendered.transaction.message.accountKeys.indexOf(p.address);
      const meta = failed.rendered.meta;
      assert.equal(meta.postBalances[at], meta.preBalances[at], 'rolled back: the deposit holds what it held');
      assert.equal(meta.fee, 5000, 'the fee is charged anyway');
      assert.ok(meta.logMessages?.some((l) => l.startsWith('Transfer: insufficient lamports')));
      cluster.seal();
      cluster.sim.setFinalityLag(20);
      const ok = await cluster.sendSol(p.address, SOL_25_USD);
      cluster.seal();
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, ok.signature);
      assert.equal(seen.receivedAmount, '0.166666667');
      cluster.mine(4);
      await waitFor('confirmations counted', async () => (await payment(p.id)).confirmations >= 3);
      await new Promise((r) => setTimeout(r, 800));
      assert.equal((await payment(p.id)).status, 'CONFIRMING', 'counted, but the slot is not finalized yet');
      cluster.sim.setFinalityLag(0);
      cluster.mine(1);
      await waitStatus(p.id, ['COMPLETED']);
      assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: p.invoice.id })).status, 'PAID');
      assert.equal(await d.common.db.em().count(ObservedTransfer, { txHash: failed.signature }), 0, 'the failed transaction moved nothing');
      assert.equal(await credits(ok.signature), 1);
    });

    await t.test('USDC: create-idempotent + transferChecked into the owner\'s new associated token account, then into the existing one, is summed; a look-alike mint to the same owner is recorded, never credited', async () => {
      const p = await open('USDC');
      const first = await cluster.sendToken(cluster.usdc, p.address, 20_000_000n);
      cluster.seal();
      const pre = first.rendered.meta.preTokenBalances as { owner: string }[];
      const post = first.rendered.meta.postTokenBalances as { owner: string; uiTokenAmount: { amount: string } }[];
      assert.equal(pre.filter((b) => b.owner === p.address).length, 0, 'the token account did not exist before the transaction');
      assert.equal(post.find((b) => b.owner === p.address)?.uiTokenAmount.amount, '20000000');
      const second = await cluster.sendToken(cluster.usdc, p.address, 5_000_000n);
      const fake = await cluster.sendToken(cluster.lookAlike, p.address, 99_000_000n);
      cluster.seal();
      await waitFor('two credits', async () => (await payment(p.id)).receivedAmount === '25');
      const rows = await d.common.db.em().find(ObservedTransfer, { paymentId: p.id });
      assert.deepEqual(rows.map((r) => r.status).sort(), ['CREDITED', 'CREDITED', 'NOT_CREDITED']);
      assert.equal(rows.find((r) => r.txHash === fake.signature)?.status, 'NOT_CREDITED');
      assert.equal(await credits(first.signature), 1);
      assert.equal(await credits(second.signature), 1);
      cluster.mine(4);
      assert.equal((await waitStatus(p.id, ['COMPLETED'])).receivedAmount, '25');
    });

    await t.test('a recipient loaded through an address lookup table (a v0 transaction, table created and extended on chain) is found', async () => {
      const p = await open('SOL');
      const sent = await cluster.sendSol(p.address, SOL_25_USD, { viaLookupTable: true });
      assert.equal(sent.rendered.version, 0);
      assert.deepEqual(sent.rendered.meta.loadedAddresses, { writable: [p.address], readonly: [] });
      assert.ok(!sent.rendered.transaction.message.accountKeys.includes(p.address), 'the recipient is not among the static keys');
      cluster.seal();
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, sent.signature);
      cluster.mine(4);
      await waitStatus(p.id, ['COMPLETED']);
    });

    await t.test('a payment from an exchange wallet holding more than 2^53 lamports is credited exactly; its block does not stop the indexer', async () => {
      const p = await open('SOL');
      const whale = await cluster.fund(WHALE);
      const sent = await cluster.sendSol(p.address, SOL_25_USD, { from: whale });
      const at = sent.rendered.transaction.message.accountKeys.indexOf(whale.address);
      assert.deepEqual([sent.rendered.meta.preBalances[at], sent.rendered.meta.postBalances[at]], [WHALE, WHALE - SOL_25_USD], 'the runtime\'s balances, beyond 2^53');
      cluster.seal();
      const text = await rawBlock(cluster.url, cluster.sim.slot());
      assert.ok(text.includes(`${WHALE},`) && text.includes(`${WHALE - SOL_25_USD},`), 'served as Agave writes u64: bare JSON numbers, every digit');
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, sent.signature);
      assert.equal(seen.receivedAmount, '0.166666667');
      cluster.mine(4);
      await waitStatus(p.id, ['COMPLETED']);
      assert.equal(await credits(sent.signature), 1);
    });

    assert.equal(proc.output().match(/indexer tick failed/g)?.length ?? 0, 0, proc.output());
    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('addresses mode (getSignaturesForAddress, getTransaction full): SOL, SOL from a wallet above 2^53 lamports and a Token-2022 USDC transfer complete; a failed transfer is not credited', async (t) => {
    const skip = await skipUnless('postgresql');
    if (skip) return t.skip(skip);
    const cluster = await startLitesvmCluster();
    t.after(() => cluster.close());
    cluster.mine(3);
    // The configured mint lives under Token-2022: its deposits land in the owner's Token-2022 associated token account.
    const { d, proc, openDirect, payment } = await startSolanaWorld(t, { dialect: 'postgresql', rpcUrl: cluster.url, mint: cluster.usdc2022.address, confirmations: 2, mode: 'addresses', maxBlocksPerRange: 50, rpcTimeoutMs: 2000, poolSize: 3 });
    const sol = await openDirect('SOL');
    const usdc = await openDirect('USDC');
    const fromWhale = await openDirect('SOL');
    const failed = await cluster.sendSolThenFail(sol.address, SOL_25_USD);
    const ok = await cluster.sendSol(sol.address, SOL_25_USD);
    const whaleSent = await cluster.sendSol(fromWhale.address, SOL_25_USD, { from: await cluster.fund(WHALE) });
    const token = await cluster.sendToken(cluster.usdc2022, usdc.address, 25_000_000n);
    assert.equal((token.rendered.meta.postTokenBalances as { programId: string }[])[1]?.programId, 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');
    cluster.seal();
    cluster.mine(3);
    for (const id of [sol.id, usdc.id, fromWhale.id]) {
      await waitFor('completed', async () => (await payment(id)).status === 'COMPLETED', 20_000);
    }
    const em = d.common.db.em();
    assert.equal((await em.findOneOrFail(Payment, { id: sol.id })).transactionHash, ok.signature);
    assert.equal((await em.findOneOrFail(Payment, { id: fromWhale.id })).transactionHash, whaleSent.signature);
    assert.equal((await em.findOneOrFail(Payment, { id: fromWhale.id })).receivedAmount, '0.166666667');
    assert.equal((await em.findOneOrFail(Payment, { id: usdc.id })).receivedAmount, '25');
    assert.equal(await em.count(ObservedTransfer, { txHash: failed.signature }), 0);
    assert.ok((cluster.sim.stats.calls.getTransaction ?? 0) >= 2, 'read through getTransaction');
    assert.equal(proc.output().match(/indexer tick failed/g)?.length ?? 0, 0, proc.output());
    assert.equal(await proc.stop('SIGTERM'), 0);
  });
});
