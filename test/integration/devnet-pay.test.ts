import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { pay, type DevnetState } from '../../src/devnet/devnet.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { closedPort } from '../helpers/webhook-receiver.ts';
import { listenLocal } from '../helpers/local-server.ts';

// `chaingate devnet pay` finds the payment to pay before it touches the chain: only a 404 for the
// payment id makes it try the id as an invoice, and a --token that contradicts an existing payment
// is refused. A fake gateway answers here; nothing reaches a chain (rpcUrl points nowhere).

const PAYMENT = 'cpaymentid000000000000001';
const INVOICE = 'cinvoiceid000000000000001';

function state(baseUrl: string, rpcUrl = 'http://127.0.0.1:1'): DevnetState {
  return {
    baseUrl,
    checkoutUrl: '',
    invoiceId: INVOICE,
    merchant: { id: 'm', apiKey: 'a'.repeat(64), apiSecret: 's'.repeat(64) },
    rpcUrl,
    chainId: 31_337,
    buyer: { address: '0x0', privateKey: `0x${'11'.repeat(32)}` },
    tokens: { USDT: '0x0000000000000000000000000000000000000001', USDC: '0x0000000000000000000000000000000000000002' },
    paymentContract: '0x0',
    databaseUrl: '',
    dir: '',
    webhookReceiver: '',
    signer: { seedFile: '', feePayer: '0x0', warning: '' },
    env: { CHAINGATE_DATABASE_URL: '', CHAINGATE_MASTER_KEY: '', CHAINGATE_CONFIG: '' },
  };
}

/** A gateway whose answers per path the test sets; it records every path asked for. */
async function fakeGateway(t: { after(fn: () => Promise<void>): void }, routes: Record<string, [number, unknown]>) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const [status, body] = routes[`${req.method} ${req.url}`] ?? [404, { success: false, error: { code: 'NOT_FOUND', message: 'no route' } }];
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const local = await listenLocal(server);
  t.after(() => local.close());
  return { url: local.url, seen };
}

const ok = (data: unknown): [number, unknown] => [200, { success: true, data }];
const fail = (status: number, code: string): [number, unknown] => [status, { success: false, error: { code, message: code.toLowerCase() } }];
const usdtPayment = { id: PAYMENT, cryptoCurrency: 'USDT', amount: '25', address: '0x00000000000000000000000000000000000000aa', status: 'PENDING' };

test('a server error on the payment lookup is reported, never retried as an invoice', async (t) => {
  const gw = await fakeGateway(t, { [`GET /api/v1/payments/${PAYMENT}`]: fail(500, 'INTERNAL_ERROR') });
  await assert.rejects(pay(state(gw.url), PAYMENT), (err: Error) => err instanceof UsageError && /payments\/\w+: INTERNAL_ERROR/.test(err.message));
  assert.deepEqual(gw.seen, [`GET /api/v1/payments/${PAYMENT}`], 'no invoice lookup after a non-404 failure');
});

test('an unreachable devnet is reported as such, not as a missing invoice', async () => {
  const url = `http://127.0.0.1:${await closedPort()}`;
  await assert.rejects(pay(state(url), PAYMENT), (err: Error) => err instanceof UsageError && /GET \/api\/v1\/payments\/\w+: cannot reach the devnet/.test(err.message) && !/invoices/.test(err.message));
});

test('only a 404 makes the id an invoice id; an id that is neither says so', async (t) => {
  const gw = await fakeGateway(t, { [`GET /api/v1/payments/${INVOICE}`]: fail(404, 'PAYMENT_NOT_FOUND') });
  await assert.rejects(pay(state(gw.url), INVOICE), /is neither a payment nor an invoice/);
  assert.deepEqual(gw.seen, [`GET /api/v1/payments/${INVOICE}`, `GET /api/v1/invoices/${INVOICE}`]);
});

test('--token that differs from an existing payment is refused before anything is sent', async (t) => {
  const gw = await fakeGateway(t, {
    [`GET /api/v1/payments/${PAYMENT}`]: ok(usdtPayment),
    [`GET /api/v1/payments/${INVOICE}`]: fail(404, 'PAYMENT_NOT_FOUND'),
    [`GET /api/v1/invoices/${INVOICE}`]: ok({ id: INVOICE, payments: [{ id: PAYMENT, status: 'PENDING' }] }),
  });
  for (const id of [PAYMENT, INVOICE]) {
    await assert.rejects(pay(state(gw.url), id, { token: 'USDC' }), (err: Error) => err instanceof UsageError && /--token USDC conflicts with payment \w+, which is already checked out in USDT/.test(err.message), id);
  }
  assert.ok(!gw.seen.some((s) => s.startsWith('POST')), 'no checkout was opened');
});
