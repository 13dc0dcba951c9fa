import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { z } from 'zod';
import type * as Responses from '../../src/http/openapi-responses.ts';
import { ChaingateApiError, createChaingateClient, type CheckoutResult, type Invoice, type InvoiceStatus, type InvoiceWithPayments, type Payment, type PaymentList, type PaymentStatus, type RefundList } from '../../src/sdk/client.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';
import { listenLocal } from '../helpers/local-server.ts';
import { shapeMismatches, successDataSchema, type OpenApiDoc } from '../helpers/openapi-shape.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { recordIndexerReport } from '../helpers/indexer-report.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('the runnable SDK example works as documented against a real serve', async (t) => {
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'e'.repeat(64) };
  const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'SDK Shop', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
  const pool = join(mkdtempSync(join(tmpdir(), 'cg-sdk-')), 'pool.txt');
  writeFileSync(pool, ['0x2000000000000000000000000000000000000001', '0x2000000000000000000000000000000000000002'].join('\n'));
  assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env)).code, 0);
  await recordIndexerReport(tdb.url, 'ethereum'); // as `chaingate index ethereum` would: the gateway leases only on a watched chain
  const serve = await spawnServe(env);
  t.after(() => serve.stop());

  // As a merchant would: the three SDK files copied into a folder of their own (no chaingate code,
  // no node_modules, no package.json), run by plain `node`, which strips the types itself: no tsx,
  // no loader, no NODE_OPTIONS from the test runner.
  const merchantDir = mkdtempSync(join(tmpdir(), 'cg-merchant-'));
  const sdkFiles = readdirSync(join(ROOT, 'src/sdk')).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  for (const f of sdkFiles) copyFileSync(join(ROOT, 'src/sdk', f), join(merchantDir, f));
  const { NODE_TEST_CONTEXT: _child, NODE_OPTIONS: _options, ...parentEnv } = process.env; // run it as a plain program, not a test file
  const plainNode = (args: string[], extraEnv: Record<string, string> = {}) =>
    spawnSync(process.execPath, args, { cwd: merchantDir, env: { ...parentEnv, ...extraEnv }, encoding: 'utf8', timeout: 60_000 });
  // Every file loads on its own (a parameter property, enum or namespace anywhere fails to load here).
  for (const f of sdkFiles.filter((name) => name !== 'example-merchant.ts')) {
    const loaded = plainNode(['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(join(merchantDir, f)).href)})`]);
    assert.equal(loaded.status, 0, `plain node cannot load src/sdk/${f}:\n${loaded.stderr}`);
  }
  const run = plainNode([join(merchantDir, 'example-merchant.ts')], { CHAINGATE_URL: serve.url, CHAINGATE_API_KEY: creds.apiKey, CHAINGATE_API_SECRET: creds.apiSecret });
  assert.equal(run.status, 0, run.stderr);
  const steps = Object.fromEntries(run.stdout.trim().split('\n').map((l) => { const o = JSON.parse(l) as { step: string }; return [o.step, o]; })) as Record<string, Record<string, unknown>>;
  assert.equal(steps.created!.status, 'OPEN');
  assert.equal(steps.retried!.sameInvoice, true, 'the same Idempotency-Key replays the first invoice');
  assert.match(String(steps.checkout!.address), /^0x2000/);
  assert.equal(steps.status!.status, 'PENDING');
  assert.equal(steps.listed!.total, 1);
  assert.deepEqual([steps.invoiceStatus!.status, steps.invoiceStatus!.paymentId], ['PAYMENT_PENDING', steps.checkout!.paymentId], 'the flat invoice status names the latest payment');
  assert.equal(steps.invoice!.status, 'PAYMENT_PENDING');
  assert.equal(steps.cancelled!.status, 'CANCELLED');
  assert.deepEqual([steps.refused!.status, steps.refused!.code], [400, 'INVOICE_CANNOT_BE_CANCELLED']);
});

// The SDK's types and the OpenAPI response schemas are the same shapes (compile time: both ways
// assignable), and every call's real answer conforms to the served document (run time).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sdkTypesMatchTheDocument: {
  invoice: Same<Invoice, z.output<typeof Responses.invoiceData>>;
  invoiceWithPayments: Same<InvoiceWithPayments, z.output<typeof Responses.invoiceWithPaymentsData>>;
  invoiceStatus: Same<InvoiceStatus, z.output<typeof Responses.invoiceStatusData>>;
  checkout: Same<CheckoutResult, z.output<typeof Responses.gatewayCheckoutData>>;
  payment: Same<Payment, z.output<typeof Responses.paymentData>>;
  paymentList: Same<PaymentList, z.output<typeof Responses.paymentListData>>;
  paymentStatus: Same<PaymentStatus, z.output<typeof Responses.paymentStatusData>>;
  refundList: Same<RefundList, z.output<typeof Responses.refundListData>>;
} = { invoice: true, invoiceWithPayments: true, invoiceStatus: true, checkout: true, payment: true, paymentList: true, paymentStatus: true, refundList: true };

test('every SDK call answers exactly the shape the OpenAPI document gives for its route', async (t) => {
  assert.ok(Object.values(sdkTypesMatchTheDocument).every(Boolean));
  const d = await startTestDaemon(t, 'sqlite');
  await d.seedPool('ethereum', evmAddresses(3));
  const doc = (await (await fetch(`${d.url}/api/v1/openapi.json`)).json()) as OpenApiDoc;
  const client = createChaingateClient({ baseUrl: d.url, apiKey: d.merchant.apiKey, apiSecret: d.merchant.apiSecret });
  const checked = new Set<string>();
  const conforms = <T>(method: string, path: string, status: number, value: T): T => {
    assert.deepEqual(shapeMismatches(doc, successDataSchema(doc, path, method, status), value), [], `${method.toUpperCase()} ${path}: ${JSON.stringify(value)}`);
    checked.add(`${method} ${path}`);
    return value;
  };

  const invoice = conforms('post', '/invoices', 201, await client.createInvoice({ orderId: 'o-1', amount: '2500', currency: 'USD', metadata: { cart: [1, 2] }, customerEmail: 'a@b.example' }));
  const before = conforms('get', '/invoices/{id}/status', 200, await client.invoiceStatus(invoice.id));
  assert.deepEqual(Object.keys(before).sort(), ['expiresAt', 'id', 'paidAt', 'paymentId', 'referenceId', 'status'], 'flat: no nested invoice or payment');
  assert.equal(before.paymentId, null);
  const { payment } = conforms('post', '/invoices/{id}/checkout', 201, await client.checkout(invoice.id, { blockchain: 'ethereum', cryptoCurrency: 'ETH' }));
  assert.equal(conforms('get', '/invoices/{id}/status', 200, await client.invoiceStatus(invoice.id)).paymentId, payment.id);
  assert.equal(conforms('get', '/invoices/{id}', 200, await client.getInvoice(invoice.id)).payments.length, 1);
  assert.equal(conforms('get', '/payments', 200, await client.listPayments({ take: 5 })).items.length, 1);
  assert.deepEqual(conforms('get', '/payments/{id}', 200, await client.getPayment(payment.id)), (await client.listPayments({ take: 1 })).items[0], 'a list item');
  assert.deepEqual(conforms('get', '/payments/{id}/refunds', 200, await client.paymentRefunds(payment.id)), { items: [] });
  conforms('get', '/payments/{id}/status', 200, await client.paymentStatus(payment.id));
  const spare = await client.createInvoice({ orderId: 'o-2', amount: '990', currency: 'USD' });
  assert.equal(conforms('delete', '/invoices/{id}', 200, await client.cancelInvoice(spare.id)).status, 'CANCELLED');

  assert.deepEqual([...checked].sort(), Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)).sort(), 'every documented gateway route was called');
  // The checker does catch a drift: a field the document lacks, and a nested invoice where it is flat.
  assert.notDeepEqual(shapeMismatches(doc, successDataSchema(doc, '/invoices/{id}/status', 'get', 200), { ...before, extra: 1 }), []);
  assert.notDeepEqual(shapeMismatches(doc, successDataSchema(doc, '/invoices/{id}/status', 'get', 200), { invoice: before, payment: null }), []);
});

test('a write is retried with the same Idempotency-Key while the first attempt is still running; other errors are not retried', async (t) => {
  const seen: { key: string | undefined; signature: string | undefined }[] = [];
  let answers = [409, 409, 201];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ key: req.headers['idempotency-key'] as string | undefined, signature: req.headers['x-signature'] as string | undefined });
      const status = answers.shift() ?? 500;
      const body =
        status === 201
          ? { success: true, data: { id: 'inv1', status: 'OPEN' }, timestamp: new Date().toISOString(), requestId: 'req_x' }
          : status === 409
            ? { success: false, error: { code: 'IDEMPOTENCY_KEY_CONFLICT', message: 'A request with this Idempotency-Key is still being processed; back off and retry' }, requestId: 'req_y' }
            : { success: false, error: { code: 'VALIDATION_ERROR', message: 'Invalid request body', details: [{ path: 'body.amount', message: 'bad' }] }, requestId: 'req_z' };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  const local = await listenLocal(server);
  t.after(() => local.close());
  const client = createChaingateClient({ baseUrl: local.url, apiKey: 'k', apiSecret: 's', retryBaseMs: 10 });
  const invoice = await client.createInvoice({ orderId: 'o', amount: '1', currency: 'USD' }, { idempotencyKey: 'order-7' });
  assert.equal(invoice.id, 'inv1');
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => s.key === 'order-7'), 'one key for every retry');

  answers = [400];
  seen.length = 0;
  await assert.rejects(client.createInvoice({ orderId: 'o', amount: 'x', currency: 'USD' }), (err: unknown) => {
    assert.ok(err instanceof ChaingateApiError);
    assert.deepEqual([err.status, err.code, err.details?.[0]?.path], [400, 'VALIDATION_ERROR', 'body.amount']);
    return true;
  });
  assert.equal(seen.length, 1, 'a 400 is not retried');
});

test('the SDK needs no other chaingate code: src/sdk imports only itself and node:', () => {
  const dir = join(ROOT, 'src/sdk');
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
  assert.ok(files.length >= 4);
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8');
    // Static imports and re-exports (`from '…'`), side-effect imports, dynamic import() and require().
    const specifiers = [...text.matchAll(/\bfrom\s*['"]([^'"]+)['"]|\bimport\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"`]([^'"`]+)|\brequire\s*\(\s*['"`]([^'"`]+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]!);
    for (const spec of specifiers) assert.ok(spec.startsWith('node:') || (/^\.\/[\w-]+\.ts$/.test(spec) && files.includes(spec.slice(2))), `${file} imports ${spec}`);
    assert.doesNotMatch(text, /\bimport\s*\(\s*[^'"`\s]/, `${file}: no computed dynamic import`);
  }
});
