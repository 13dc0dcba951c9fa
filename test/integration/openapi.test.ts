import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import { ERROR_STATUS } from '../../src/domain/errors.ts';
import { createInvoiceBody } from '../../src/http/gateway/schemas.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';
import { documentedKeys, shapeMismatches, successDataSchema, type OpenApiDoc } from '../helpers/openapi-shape.ts';

// The OpenAPI documents are generated from the validating zod schemas; this checks that they are
// valid OpenAPI 3.1 (a real validator of the spec's JSON schemas) and that every route the server
// registers on either surface is in them.

test('both OpenAPI 3.1 documents validate and describe every registered route, the headers, the envelope and every error code', async (t) => {
  const d = await startTestDaemon(t, 'sqlite');
  const docs: Record<string, { paths: Record<string, Record<string, unknown>>; components: Record<string, Record<string, unknown>> }> = {};
  for (const [surface, prefix] of [['gateway', '/api/v1'], ['checkout', '/checkout/api/v1']] as const) {
    const res = await fetch(`${d.url}${prefix}/openapi.json`);
    assert.equal(res.status, 200, `${prefix}/openapi.json is served without a signature`);
    const doc = (await res.json()) as (typeof docs)[string] & { openapi: string };
    assert.equal(doc.openapi, '3.1.0');
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    assert.equal(result.valid, true, String(JSON.stringify(result.errors)).slice(0, 2000));
    docs[surface] = doc;

    const registered = d.daemon.app.registeredRoutes.filter((r) => r.url.startsWith(`${prefix}/`) && !r.url.endsWith('/openapi.json') && (surface === 'checkout' || !r.url.startsWith('/checkout/')));
    assert.ok(registered.length >= 5);
    for (const r of registered) {
      const path = r.url.slice(prefix.length).replace(/:(\w+)/g, '{$1}');
      assert.ok(doc.paths[path]?.[r.method.toLowerCase()], `${r.method} ${r.url} is documented in the ${surface} document`);
    }
    const served = new Set(registered.map((r) => `${r.method.toLowerCase()} ${r.url.slice(prefix.length).replace(/:(\w+)/g, '{$1}')}`));
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) assert.ok(served.has(`${method} ${path}`), `${method.toUpperCase()} ${prefix}${path} is documented but not served`);
    }
    const codes = (doc.components.schemas!.ErrorCode as { enum: string[] }).enum;
    assert.deepEqual(codes.sort(), Object.keys(ERROR_STATUS).sort(), 'every error code');
  }
  assert.equal((await new Validator().validate({ openapi: '3.1.0', info: { title: 'x' }, paths: 5 })).valid, false, 'the validator does refuse a broken document');
  const gw = docs.gateway!;
  assert.equal((gw.components.securitySchemes!.Signature as { name: string }).name, 'X-Signature');
  assert.equal((gw.components.parameters!.IdempotencyKey as { name: string }).name, 'Idempotency-Key');
  const create = gw.paths['/invoices']!.post as { requestBody: { content: { 'application/json': { schema: { properties: Record<string, { pattern?: string; maximum?: number }> } } } }; responses: Record<string, unknown> };
  const schema = create.requestBody.content['application/json'].schema;
  assert.equal(schema.properties.amount!.pattern, '^[1-9]\\d{0,14}$', 'from the zod schema that validates the route');
  assert.equal(schema.properties.expiresInMinutes!.maximum, 1440);
  assert.ok(create.responses['201'] && create.responses['401'] && create.responses['409'], 'success, auth and idempotency answers');
  const confirm = docs.checkout!.paths['/payments/{id}/confirm']!.post as { security: unknown[] };
  assert.deepEqual(confirm.security, [{ IdToken: [] }]);
  const transport = (gw.paths['/payments']!.get as { responses: Record<string, { description: string }> }).responses;
  assert.match(transport['431']!.description, /HEADERS_TOO_LARGE/);
  assert.match(transport['408']!.description, /REQUEST_TIMEOUT/);
  assert.ok((create.responses['413'] as { description: string }).description.includes('PAYLOAD_TOO_LARGE'), 'body errors on a route with a body');
  assert.equal(transport['413'], undefined, 'no body, no 413');
});

test('docs/errors.md lists every error code with its fixed status, and the transport codes have their own', () => {
  const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
  for (const [code, status] of Object.entries(ERROR_STATUS)) assert.match(doc, new RegExp(`^\\| \`${code}\` \\| ${status} \\|`, 'm'), `docs/errors.md: a row for ${code} (${status})`);
  assert.deepEqual([ERROR_STATUS.HEADERS_TOO_LARGE, ERROR_STATUS.REQUEST_TIMEOUT, ERROR_STATUS.PAYLOAD_TOO_LARGE], [431, 408, 413]);
});

test("docs/api.md's invoice amount row states the rule the code enforces", () => {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const row = doc.split('\n').find((l) => l.startsWith('| `amount` | string | yes |'));
  assert.ok(row, 'the create-invoice field table has an amount row');
  const amount = createInvoiceBody.shape.amount;
  const { pattern } = z.toJSONSchema(amount) as { pattern: string };
  assert.ok(row.includes(`\`${pattern}\``), `the row quotes ${pattern}: ${row}`);
  assert.match(row, /1 to 15 digits/);
  assert.match(row, /zero is refused/);
  assert.doesNotMatch(row, /80 characters|non-negative/);
  // And the code does what the row says.
  for (const ok of ['1', '2500', '9'.repeat(15)]) assert.ok(amount.safeParse(ok).success, ok);
  for (const bad of ['0', '0100', '1'.repeat(16), '-1', '1.5', '+1', ' 1']) assert.ok(!amount.safeParse(bad).success, bad);
  const limits = doc.split('\n').find((l) => l.startsWith('| invoice `amount` |'));
  assert.match(limits ?? '', /1 to 15 digits of minor units \(zero refused\)/);
});

test('the response schemas come from the zod view schemas, and real answers of the checkout surface conform to them', async (t) => {
  const d = await startTestDaemon(t, 'sqlite');
  await d.seedPool('ethereum', evmAddresses(2));
  const doc = (await (await fetch(`${d.url}/checkout/api/v1/openapi.json`)).json()) as OpenApiDoc;
  const gateway = (await (await fetch(`${d.url}/api/v1/openapi.json`)).json()) as OpenApiDoc;
  // Generated, not hand-written: strict objects (additionalProperties: false) with the views' fields.
  assert.deepEqual(documentedKeys(gateway, successDataSchema(gateway, '/invoices/{id}/status', 'get', 200)), ['id', 'referenceId', 'status', 'paymentId', 'paidAt', 'expiresAt']);
  assert.equal(gateway.components.schemas.InvoiceStatus!.additionalProperties, false);
  assert.deepEqual(gateway.components.schemas.PaymentList!.properties!.items!.items, { $ref: '#/components/schemas/Payment' });

  const checked = new Set<string>();
  const conforms = (method: string, path: string, status: number, res: { status: number; json: { data: unknown } }) => {
    assert.equal(res.status, status, JSON.stringify(res.json));
    assert.deepEqual(shapeMismatches(doc, successDataSchema(doc, path, method, status), res.json.data), [], `${method.toUpperCase()} ${path}: ${JSON.stringify(res.json.data)}`);
    checked.add(`${method} ${path}`);
    return res.json.data as Record<string, unknown>;
  };
  const invoice = (await d.signed('POST', '/api/v1/invoices', { orderId: 'o-9', amount: '1500', currency: 'USD', customerName: 'Ada Lovelace' })).json.data as { id: string };
  conforms('get', '/invoices/{id}', 200, await d.plain('GET', `/checkout/api/v1/invoices/${invoice.id}`));
  conforms('get', '/invoices/{id}/status', 200, await d.plain('GET', `/checkout/api/v1/invoices/${invoice.id}/status`));
  const { payment } = conforms('post', '/invoices/{id}/checkout', 201, await d.plain('POST', `/checkout/api/v1/invoices/${invoice.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' })) as { payment: { id: string } };
  conforms('get', '/payments/{id}/status', 200, await d.plain('GET', `/checkout/api/v1/payments/${payment.id}/status`));
  // The confirm route needs an identity provider's token; its answer's schema is tied to the
  // function that makes it (ConfirmResult) at compile time.
  assert.deepEqual(documentedKeys(doc, successDataSchema(doc, '/payments/{id}/confirm', 'post', 200)), ['status', 'transactionHash', 'confirmations', 'requiredConfirmations', 'message']);
  assert.deepEqual([...checked].sort(), ['get /invoices/{id}', 'get /invoices/{id}/status', 'get /payments/{id}/status', 'post /invoices/{id}/checkout']);
});
