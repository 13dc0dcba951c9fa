import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { parseUnits, type Contract } from 'ethers';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { startEvmWorld, REQUIRED_CONFIRMATIONS } from '../helpers/evm-world.ts';
import { waitFor } from '../helpers/indexer-process.ts';

const ISSUER = 'https://id.example.test';
const AUDIENCE = 'chaingate-checkout';

async function jwksServer(t: { after(fn: () => Promise<void> | void): void }) {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  const token = () => new SignJWT({ sub: 'buyer-1' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setIssuedAt().setExpirationTime('5m').sign(privateKey);
  return { url, token };
}


/** A web3 payment paid through the contract and claimed with /confirm (PROCESSING), with a snapshot taken before the pay. */
async function claimedPayment<X>(t: { after(fn: () => Promise<void> | void): void }, beforePay?: (w: Awaited<ReturnType<typeof startEvmWorld>>) => Promise<X>) {
  const jwks = await jwksServer(t);
  const w = await startEvmWorld(t, { dialect: 'sqlite', daemon: { idToken: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url } } });
  const usdc = (n: string) => parseUnits(n, 6);
  const p = await w.openPayment('USDC', { method: 'web3' });
  const before = BigInt(await w.node.send<string>('eth_blockNumber', []));
  const extra = await beforePay?.(w);
  const snapshot = await w.node.snapshot();
  await (await (w.fx.usdc.connect(w.fx.payer) as Contract).getFunction('approve')(w.fx.addresses.gateway, usdc('25'))).wait();
  const payTx = await (w.fx.gateway.connect(w.fx.payer) as Contract).getFunction('pay')(p.externalId, w.fx.addresses.usdc, usdc('25'));
  await payTx.wait();
  const ok = await w.d.plain('POST', `/checkout/api/v1/payments/${p.id}/confirm`, { txHash: payTx.hash }, { Authorization: `Bearer ${await jwks.token()}` });
  assert.equal(ok.json.data.status, 'PROCESSING', ok.text);
  return { w, p, before, snapshot, extra };
}

describe('POST /checkout/api/v1/payments/{id}/confirm against a real chain', () => {
  test('web3: pay through the contract, confirm -> PROCESSING -> COMPLETED; every confirm error', async (t) => {
    const jwks = await jwksServer(t);
    const w = await startEvmWorld(t, { dialect: 'sqlite', daemon: { idToken: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url } } });
    const usdc = (n: string) => parseUnits(n, 6);
    const confirm = async (paymentId: string, txHash: string) =>
      w.d.plain('POST', `/checkout/api/v1/payments/${paymentId}/confirm`, { txHash }, { Authorization: `Bearer ${await jwks.token()}` });
    const gateway = w.fx.gateway.connect(w.fx.payer) as Contract;
    const approve = async (amount: bigint) => (await (w.fx.usdc.connect(w.fx.payer) as Contract).getFunction('approve')(w.fx.addresses.gateway, amount)).wait();

    const p = await w.openPayment('USDC', { method: 'service_wallet' });
    await approve(usdc('25'));
    const payTx = await gateway.getFunction('pay')(p.externalId, w.fx.addresses.usdc, usdc('25'));
    await payTx.wait();

    // errors first, while the payment is PENDING
    const unknown = await confirm(p.id, `0x${'12'.repeat(32)}`);
    assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'TX_NOT_FOUND']);
    const transferTx = await (w.fx.usdc.connect(w.fx.payer) as Contract).getFunction('transfer')(w.fx.addresses.other, 1n);
    await transferTx.wait();
    const elsewhere = await confirm(p.id, transferTx.hash);
    assert.deepEqual([elsewhere.status, elsewhere.json.error.code], [400, 'TX_CONTRACT_MISMATCH']);
    const otherPay = await gateway.getFunction('pay')(`0x${'cd'.repeat(32)}`, '0x0000000000000000000000000000000000000000', 5n, { value: 5n });
    await otherPay.wait();
    const mismatch = await confirm(p.id, otherPay.hash);
    assert.deepEqual([mismatch.status, mismatch.json.error.code], [400, 'TX_PAYMENT_MISMATCH']);
    // a reverted pay(): amount 0 (mined with status 0 even though the node reports the revert)
    await gateway.getFunction('pay')(p.externalId, w.fx.addresses.usdc, 0n, { gasLimit: 200_000 }).catch(() => undefined);
    const latest = await w.node.send<{ transactions: string[] }>('eth_getBlockByNumber', ['latest', false]);
    const reverted = await confirm(p.id, latest.transactions[0]!);
    assert.deepEqual([reverted.status, reverted.json.error.code], [400, 'TX_FAILED']);
    const badHash = await w.d.plain('POST', `/checkout/api/v1/payments/${p.id}/confirm`, { txHash: '0x1234' }, { Authorization: `Bearer ${await jwks.token()}` });
    assert.deepEqual([badHash.status, badHash.json.error.code], [400, 'VALIDATION_ERROR']);
    const noToken = await w.d.plain('POST', `/checkout/api/v1/payments/${p.id}/confirm`, { txHash: payTx.hash });
    assert.equal(noToken.status, 401);

    // success, then idempotent
    const ok = await confirm(p.id, payTx.hash);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.data.status, 'PROCESSING');
    assert.equal(ok.json.data.transactionHash, payTx.hash);
    assert.equal(ok.json.data.requiredConfirmations, REQUIRED_CONFIRMATIONS);
    assert.equal(typeof ok.json.data.confirmations, 'number');
    assert.equal(typeof ok.json.data.message, 'string');
    const again = await confirm(p.id, payTx.hash);
    assert.equal(again.json.data.message, 'Payment is already being processed');

    // the indexer takes it from PROCESSING to COMPLETED, without counting the event twice
    const indexer = w.startIndexer(['--from-block', '0']);
    await w.node.mine(REQUIRED_CONFIRMATIONS);
    const done = await w.waitStatus(p.id, ['COMPLETED']);
    assert.equal(done.receivedAmount, '25');
    assert.equal((await w.transfers(p.id)).length, 1);
    const completed = await confirm(p.id, payTx.hash);
    assert.equal(completed.json.data.status, 'COMPLETED');
    assert.equal(completed.json.data.message, 'Payment is already being processed');

    // an expired contract payment, and a direct payment, cannot be confirmed
    const late = await w.openPayment('USDC', { method: 'web3' });
    await w.d.common.db.em().nativeUpdate(Payment, { id: late.id }, { expiresAt: new Date(Date.now() - 1000) });
    const expired = await confirm(late.id, payTx.hash);
    assert.deepEqual([expired.status, expired.json.error.code], [400, 'PAYMENT_EXPIRED']);
    const direct = await w.openPayment('USDC');
    const notContract = await confirm(direct.id, payTx.hash);
    assert.deepEqual([notContract.status, notContract.json.error.code], [400, 'PAYMENT_NOT_CONFIRMABLE']);
    const missing = await confirm('nosuchpayment00000000000', payTx.hash);
    assert.deepEqual([missing.status, missing.json.error.code], [404, 'PAYMENT_NOT_FOUND']);
    await waitFor('indexer alive', async () => indexer.child.exitCode === null);
    await indexer.stop();
  });

  test('a /confirm claim whose block leaves the chain is un-credited by the indexer; no payment.completed', async (t) => {
    const { w, p, before, snapshot } = await claimedPayment(t);

    // The pay() block leaves the canonical chain: a longer chain without it replaces it.
    await w.node.revert(snapshot);
    await w.node.mine(REQUIRED_CONFIRMATIONS + 4);
    const head = BigInt(await w.node.send<string>('eth_blockNumber', []));
    const indexer = w.startIndexer(['--from-block', (before + 1n).toString()]);
    await w.waitStatus(p.id, ['PENDING']);
    await waitFor('indexer past the old block', async () => {
      const cursor = await w.d.common.db.em().findOne(IndexerCursor, { chain: 'ethereum' });
      return cursor && BigInt(cursor.blockNumber) >= head;
    });
    const after = await w.payment(p.id);
    assert.equal(after.status, 'PENDING');
    assert.equal(after.receivedAmount, '0');
    assert.equal(after.transactionHash, null);
    const [claim] = await w.transfers(p.id);
    assert.equal(claim?.status, 'REORGED');
    assert.equal(await w.d.common.db.em().count(WebhookEvent, { paymentId: p.id, type: 'payment.completed' }), 0);
    await indexer.stop();
  });

  test('with the indexer running through it: the claim is seen, its block is replaced by a longer chain, the payment goes back to PENDING', async (t) => {
    const { w, p, snapshot, extra: indexer } = await claimedPayment(t, async (world) => world.startIndexer(['--from-block', (BigInt(await world.node.send<string>('eth_blockNumber', [])) + 1n).toString()]));
    const cursorAt = async () => BigInt((await w.d.common.db.em().findOne(IndexerCursor, { chain: 'ethereum' }, { refresh: true }))?.blockNumber ?? '-1');
    const head = async () => BigInt(await w.node.send<string>('eth_blockNumber', []));
    const seen = await head();
    await waitFor('the indexer has read the pay() block', async () => (await cursorAt()) >= seen);
    const mid = await w.payment(p.id);
    assert.ok(['PROCESSING', 'CONFIRMING'].includes(mid.status), mid.status);

    await w.node.revert(snapshot);
    await w.node.mine(REQUIRED_CONFIRMATIONS + 4);
    const newHead = await head();
    await w.waitStatus(p.id, ['PENDING']);
    await waitFor('indexer on the new chain', async () => (await cursorAt()) >= newHead);
    const after = await w.payment(p.id);
    assert.deepEqual([after.status, after.receivedAmount, after.transactionHash], ['PENDING', '0', null]);
    assert.ok((await w.transfers(p.id)).every((r) => r.status !== 'CREDITED'), 'nothing stays credited');
    assert.equal(await w.d.common.db.em().count(WebhookEvent, { paymentId: p.id, type: 'payment.completed' }), 0);
    await indexer!.stop();
  });
});
