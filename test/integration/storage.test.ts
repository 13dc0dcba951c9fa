import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Database } from '../../src/store/orm.ts';
import { createMerchant, getMerchantOrThrow, listMerchants, rotateSecret, updateMerchant } from '../../src/store/merchants.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { nextReference, ReferenceBlocks, REFERENCE_BLOCK } from '../../src/store/reference-ids.ts';
import { ormExecutor } from '../../src/store/transaction.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { IdempotencyRecord } from '../../src/store/entities/idempotency-record.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { WebhookAttempt } from '../../src/store/entities/webhook-attempt.entity.ts';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { IndexedBlock } from '../../src/store/entities/indexed-block.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { createSecretBox } from '../../src/domain/secret-box.ts';
import { isValidReferenceId } from '../../src/domain/reference-id.ts';
import { DIALECTS, openMigratedTestDatabase, skipUnless } from '../helpers/databases.ts';

const box = createSecretBox('k'.repeat(64));
const EIGHTEEN = '123456789012345678901234567890123456789012345678901234567890.123456789012345678';

for (const dialect of DIALECTS) {
  describe(`storage on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    const fresh = (t: { after(fn: () => Promise<void>): void }): Promise<Database> => openMigratedTestDatabase(t, dialect);

    test('migrations produce exactly the schema of the entities', async (t) => {
      const db = await fresh(t);
      const diff = await db.orm.schema.getUpdateSchemaSQL({ wrap: false });
      assert.equal(diff.trim(), '', `schema drift:\n${diff}`);
    });

    test('merchant points: SQL writes keep JSON choices, bump the version, refuse an unknown id', async (t) => {
      const db = await fresh(t);
      const { merchant, apiSecret } = await createMerchant(db, box, { name: 'Acme', acceptedChains: ['ethereum'], acceptedCurrencies: { ethereum: ['USDT'] }, webhookUrl: 'https://shop.example/hooks' });
      assert.equal(merchant.version, 1);
      assert.deepEqual([merchant.acceptedChains, merchant.acceptedCurrencies, merchant.webhookEvents, merchant.active], [['ethereum'], { ethereum: ['USDT'] }, null, true]);
      assert.equal(box.open(merchant.apiSecretEnc, merchant.id), apiSecret);
      const changed = await updateMerchant(db, merchant.id, { acceptedChains: ['ethereum', 'tron'], acceptedCurrencies: null, webhookUrl: null, webhookEvents: ['payment.completed'], active: false });
      assert.deepEqual([changed.acceptedChains, changed.acceptedCurrencies, changed.webhookUrl, changed.webhookEvents, changed.active, changed.version], [['ethereum', 'tron'], null, null, ['payment.completed'], false, 2]);
      assert.equal(changed.name, 'Acme');
      // Nothing to change: nothing written, the version stays.
      assert.equal((await updateMerchant(db, merchant.id, {})).version, 2);
      const rotated = await rotateSecret(db, box, merchant.id);
      assert.notEqual(rotated.apiSecret, apiSecret);
      assert.equal(box.open(rotated.merchant.apiSecretEnc, merchant.id), rotated.apiSecret);
      assert.equal(rotated.merchant.version, 3);
      assert.deepEqual(await getMerchantOrThrow(db, merchant.id), rotated.merchant);
      assert.deepEqual((await listMerchants(db)).map((m) => m.id), [merchant.id]);
      await assert.rejects(updateMerchant(db, 'nope', { active: true }), UsageError);
      await assert.rejects(rotateSecret(db, box, 'nope'), UsageError);
      await assert.rejects(getMerchantOrThrow(db, 'nope'), UsageError);
    });

    test('every entity can be created and read back, amounts keep 18+ decimals', async (t) => {
      const db = await fresh(t);
      const { merchant, apiSecret } = await createMerchant(db, box, { name: 'Acme', acceptedChains: ['ethereum'] });
      const em = db.em();
      const invoice = em.create(Invoice, {
        referenceId: await nextReference(ormExecutor(em, db.dialect), 'INV'),
        merchant: em.getReference(MerchantPoint, merchant.id),
        orderId: 'o-1',
        amount: '2500',
        currency: 'USD',
        status: 'OPEN',
        customerEmail: null,
        customerName: null,
        customerMetadata: { tier: 'gold' },
        metadata: { nested: { a: [1, 2] } },
        returnUrl: null,
        cancelUrl: null,
        expiresAt: new Date(Date.now() + 3_600_000),
        viewedAt: null,
        paidAt: null,
        cancelledAt: null,
      });
      await em.flush();
      const payment = em.create(Payment, {
        referenceId: await nextReference(ormExecutor(em, db.dialect), 'PAY'),
        invoice,
        merchant: em.getReference(MerchantPoint, merchant.id),
        blockchain: 'ethereum',
        network: 'MAINNET',
        cryptoCurrency: 'ETH',
        decimals: 18,
        tokenAddress: null,
        amount: EIGHTEEN,
        expectedAmount: EIGHTEEN,
        receivedAmount: '0.000000000000000001',
        address: '0x0000000000000000000000000000000000000001',
        requiredConfirmations: 12,
        transactionHash: null,
        blockNumber: null,
        contractAddress: null,
        externalId: null,
        externalIdUuid: null,
        metadata: {},
        expiresAt: new Date(Date.now() + 1_800_000),
        completedAt: null,
      });
      em.create(WalletAddress, { chain: 'ethereum', address: '0x0000000000000000000000000000000000000001', source: 'file', derivationIndex: null, paymentId: null, leasedAt: null });
      em.create(IdempotencyRecord, { merchantId: merchant.id, key: 'k1', fingerprint: 'f'.repeat(64), state: 'IN_FLIGHT', statusCode: null, responseBody: null, expiresAt: new Date() });
      const event = em.create(WebhookEvent, { merchant: em.getReference(MerchantPoint, merchant.id), type: 'payment.completed', payload: '{}', paymentId: payment.id, invoiceId: invoice.id });
      const delivery = em.create(WebhookDelivery, { event, replayOf: null, nextAttemptAt: new Date(), leaseOwner: null, leaseUntil: null, lastStatusCode: null, lastError: null, deliveredAt: null });
      em.create(WebhookAttempt, { delivery, attemptedAt: new Date(), statusCode: 200, durationMs: 12, responseBody: 'ok', error: null });
      em.create(IndexerCursor, { chain: 'ethereum', network: 'MAINNET', blockNumber: '19000000', blockHash: '0xabc', leaseOwner: null, leaseUntil: null });
      em.create(IndexedBlock, { chain: 'ethereum', network: 'MAINNET', number: '19000000', hash: '0xabc', parentHash: '0xabb' });
      em.create(ObservedTransfer, { chain: 'ethereum', network: 'MAINNET', txHash: '0x01', logIndex: 3, blockNumber: '19000000', blockHash: '0xabc', fromAddress: null, toAddress: '0x01', tokenAddress: null, symbol: 'ETH', amount: '1000000000000000000000000000000', paymentId: payment.id, status: 'CREDITED', note: null });
      await em.flush();

      const read = db.em();
      const p = await read.findOneOrFail(Payment, { id: payment.id }, { populate: ['invoice'] });
      assert.equal(p.amount, EIGHTEEN);
      assert.equal(p.receivedAmount, '0.000000000000000001');
      assert.equal(p.invoice.metadata.nested !== undefined, true);
      assert.deepEqual((await read.findOneOrFail(Invoice, { id: invoice.id })).customerMetadata, { tier: 'gold' });
      assert.ok(isValidReferenceId(p.referenceId));
      assert.ok(isValidReferenceId(invoice.referenceId));
      const m = await read.findOneOrFail(MerchantPoint, { id: merchant.id });
      assert.notEqual(m.apiSecretEnc, apiSecret);
      assert.ok(!m.apiSecretEnc.includes(apiSecret));
      assert.equal(box.open(m.apiSecretEnc, m.id), apiSecret);
      assert.deepEqual(m.acceptedChains, ['ethereum']);
      for (const entity of [WalletAddress, IdempotencyRecord, WebhookEvent, WebhookDelivery, WebhookAttempt, IndexerCursor, IndexedBlock, ObservedTransfer]) {
        assert.equal(await read.count(entity as typeof WalletAddress, {}), 1, entity.name);
      }
    });

    test('unique constraints hold: apiKey, referenceId, pool address, observed transfer, idempotency key', async (t) => {
      const db = await fresh(t);
      const { merchant } = await createMerchant(db, box, { name: 'A' });
      const dupKey = db.em();
      dupKey.create(MerchantPoint, { name: 'B', apiKey: merchant.apiKey, apiSecretEnc: 'x', webhookUrl: null, acceptedChains: null, acceptedCurrencies: null, webhookEvents: null });
      await assert.rejects(dupKey.flush(), UniqueConstraintViolationException);

      const wa = db.em();
      wa.create(WalletAddress, { chain: 'bitcoin', address: 'bc1qx', source: 'file', derivationIndex: null, paymentId: null, leasedAt: null });
      await wa.flush();
      const wa2 = db.em();
      wa2.create(WalletAddress, { chain: 'bitcoin', address: 'bc1qx', source: 'file', derivationIndex: null, paymentId: null, leasedAt: null });
      await assert.rejects(wa2.flush(), UniqueConstraintViolationException);
      const wa3 = db.em();
      wa3.create(WalletAddress, { chain: 'bitcoin', isTestnet: true, address: 'bc1qx', source: 'file', derivationIndex: null, paymentId: null, leasedAt: null });
      await wa3.flush(); // another network is another pool

      const transfer = { chain: 'ethereum', network: 'MAINNET', txHash: '0xaa', logIndex: 0, blockNumber: '1', blockHash: '0x1', fromAddress: null, toAddress: '0x2', tokenAddress: null, symbol: null, amount: '1', paymentId: null, status: 'UNMATCHED' as const, note: null };
      const ot = db.em();
      ot.create(ObservedTransfer, transfer);
      await ot.flush();
      const ot2 = db.em();
      ot2.create(ObservedTransfer, transfer);
      await assert.rejects(ot2.flush(), UniqueConstraintViolationException);

      const idem = { merchantId: merchant.id, key: 'same', fingerprint: 'f', state: 'IN_FLIGHT' as const, statusCode: null, responseBody: null, expiresAt: new Date() };
      const i1 = db.em();
      i1.create(IdempotencyRecord, idem);
      await i1.flush();
      const i2 = db.em();
      i2.create(IdempotencyRecord, idem);
      await assert.rejects(i2.flush(), UniqueConstraintViolationException);

      const r = db.em();
      const inv = { merchant: r.getReference(MerchantPoint, merchant.id), orderId: 'o', amount: '1', currency: 'USD', customerEmail: null, customerName: null, customerMetadata: {}, metadata: {}, returnUrl: null, cancelUrl: null, expiresAt: new Date(), viewedAt: null, paidAt: null, cancelledAt: null };
      r.create(Invoice, { ...inv, referenceId: 'INV-261121-001A' });
      await r.flush();
      const r2 = db.em();
      r2.create(Invoice, { ...inv, merchant: r2.getReference(MerchantPoint, merchant.id), referenceId: 'INV-261121-001A' });
      await assert.rejects(r2.flush(), UniqueConstraintViolationException);
    });

    test('nextReference() never repeats under concurrency', async (t) => {
      const db = await fresh(t);
      const ids = await Promise.all(Array.from({ length: 40 }, () => db.write((x) => nextReference(x, 'INV'))));
      assert.equal(new Set(ids).size, 40);
    });

    test('reference blocks of two processes and the in-transaction counter never share a number', async (t) => {
      const db = await fresh(t);
      // Two allocators stand for two daemons; the counter in a transaction for the SQLite-style path.
      const a = new ReferenceBlocks(db);
      const b = new ReferenceBlocks(db);
      const now = new Date();
      const ids = await Promise.all([
        ...Array.from({ length: 3 * REFERENCE_BLOCK + 5 }, () => a.next('INV', now)),
        ...Array.from({ length: 2 * REFERENCE_BLOCK + 3 }, () => b.next('INV', now)),
        ...Array.from({ length: 10 }, () => db.write((x) => nextReference(x, 'INV', now))),
      ]);
      assert.equal(new Set(ids).size, ids.length);
      assert.ok(ids.every(isValidReferenceId));
    });
  });
}
