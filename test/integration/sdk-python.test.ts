import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChaingateClient } from '../../src/sdk/client.ts';
import { signWebhookPayload } from '../../src/sdk/verify-webhook.ts';
import { docBlocks } from '../helpers/doc-examples.ts';
import { chaingateHeaders, postDelivery, runProgram, standardHeaders, startSdkShop, stepsOf } from '../helpers/sdk-shop.ts';

// The Python client (sdk/python, standard library only) against a real `chaingate serve`, driven
// with Debian's python3 as a child process: every gateway route, an idempotent replay byte for
// byte, errors with their code, status and request id, and a real webhook delivery verified by a
// receiver written in Python. Also its own unittest suite (the shared cases of sdk/cases) and the
// examples of docs/sdk.md.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PY = join(ROOT, 'sdk/python');
const PYTHON = process.env.CHAINGATE_TEST_PYTHON ?? 'python3';
const withSdk = { PYTHONPATH: join(PY, 'src'), PYTHONDONTWRITEBYTECODE: '1' };

test('the Python unit tests pass: the shared cases of sdk/cases and the retry discipline (python -m unittest)', async () => {
  const run = await runProgram(PYTHON, ['-m', 'unittest', 'discover', '-s', join(PY, 'tests'), '-t', PY], withSdk);
  assert.equal(run.code, 0, run.stderr);
  const ran = Number(/Ran (\d+) tests?/.exec(run.stderr)?.[1]);
  assert.ok(ran >= 13, `ran ${ran} tests:\n${run.stderr}`);
  assert.match(run.stderr, /\nOK\s*$/);
});

test('the Python walkthrough drives every route of a real serve; a real delivery verifies in a Python receiver, tampered and stale ones are refused', async (t) => {
  const shop = await startSdkShop(t, PYTHON, [join(PY, 'examples/webhook_receiver.py')]);
  const steps = stepsOf(await runProgram(PYTHON, [join(PY, 'examples/walkthrough.py')], { ...shop.scriptEnv, PYTHONDONTWRITEBYTECODE: '1' }));
  const ts = createChaingateClient({ baseUrl: shop.serve.url, apiKey: shop.creds.apiKey, apiSecret: shop.creds.apiSecret });

  // Writes and reads, checked against what the server holds (read with the TypeScript client).
  const created = steps.created!;
  assert.deepEqual([created.status, created.amount, created.description, created.metadata], ['OPEN', '2500', 'Zwei Becher ☕', { cart: 'c-77' }]);
  assert.equal(steps.retried!.id, created.id, 'the same Idempotency-Key gives back the first invoice');
  const replayed = steps.replayed!;
  assert.deepEqual([replayed.sameBytes, replayed.firstReplayed, replayed.secondReplayed, replayed.status], [true, false, true, 201], 'a replay is the stored answer, byte for byte');
  assert.deepEqual([steps.invoiceStatus!.status, steps.invoiceStatus!.paymentId], ['OPEN', null]);
  const checkout = steps.checkout!;
  assert.match(String(checkout.address), /^0x3000/);
  assert.equal(checkout.invoiceStatus, 'PAYMENT_PENDING');
  assert.deepEqual([steps.invoice!.status, steps.invoice!.payments], ['PAYMENT_PENDING', 1]);
  assert.deepEqual([steps.listed!.total, steps.listed!.ids], [1, [checkout.paymentId]]);
  const payment = await ts.getPayment(String(checkout.paymentId));
  assert.deepEqual([steps.payment!.status, steps.payment!.amount, steps.payment!.receivedAmount], [payment.status, payment.amount, payment.receivedAmount]);
  assert.deepEqual([steps.payment!.settlement, steps.payment!.difference], ['underpaid', `-${payment.amount}`], 'nothing received yet: underpaid by the whole amount');
  assert.deepEqual([steps.paymentStatus!.id, steps.paymentStatus!.status, steps.paymentStatus!.requiredConfirmations], [payment.id, 'PENDING', payment.requiredConfirmations]);
  assert.equal(steps.cancelled!.status, 'CANCELLED');
  assert.equal((await ts.getInvoice(String(replayed.id))).status, 'CANCELLED');
  assert.equal((await ts.listPayments()).pagination.total, 1, 'no retry made a second payment');

  // Errors: one exception with the gateway's code, the HTTP status and the request id.
  for (const [name, status, code] of [['wrongSecret', 401, 'SIGNATURE_INVALID'], ['notFound', 404, 'INVOICE_NOT_FOUND'], ['keyReused', 409, 'IDEMPOTENCY_KEY_CONFLICT'], ['cancelAgain', 400, 'INVOICE_CANNOT_BE_CANCELLED']] as const) {
    const s = steps[name];
    assert.ok(s, `step ${name} raised`);
    assert.deepEqual([s.status, s.code], [status, code], name);
    assert.match(String(s.requestId), /^req_[0-9a-f]{24}$/, `${name}: the request id`);
  }

  // The cancel's invoice.cancelled, delivered by serve to the Python receiver and verified there.
  const [delivered] = await shop.receiver.waitFor(1);
  assert.deepEqual([delivered!.verdict, delivered!.type], ['ok', 'invoice.cancelled'], JSON.stringify(delivered));
  const body = Buffer.from(delivered!.body, 'base64');
  assert.equal(JSON.parse(body.toString()).data.invoice.id, replayed.id);
  const eventId = delivered!.eventId!;
  const now = Math.floor(Date.now() / 1000);
  const secret = shop.creds.apiSecret;
  const send = (b: Buffer, h: Record<string, string>) => postDelivery(shop.receiver.url, b, h);

  // The same delivery again (a duplicate): verified, and recognised by its event id.
  assert.deepEqual(await send(body, { ...chaingateHeaders(secret, eventId, now, body), ...standardHeaders(secret, eventId, now, body) }), { status: 200, text: 'duplicate' });
  // A tampered body under the real signature.
  const tampered = Buffer.from(body.toString().replace('"CANCELLED"', '"PAID"'));
  assert.notDeepEqual(tampered, body);
  const sentSignature = Object.entries(delivered!.headers).find(([k]) => k.toLowerCase() === 'x-webhook-signature')?.[1];
  assert.match(String(sentSignature), /^t=\d+,v1=[0-9a-f]{64}$/);
  assert.deepEqual(await send(tampered, { 'X-Webhook-Signature': sentSignature! }), { status: 400, text: 'mismatch' });
  // A captured delivery an hour old, correctly signed for that time, in either scheme.
  assert.deepEqual(await send(body, chaingateHeaders(secret, eventId, now - 3600, body)), { status: 400, text: 'expired' });
  assert.deepEqual(await send(body, standardHeaders(secret, eventId, now - 3600, body)), { status: 400, text: 'expired' });
  // Standard Webhooks alone, fresh: accepted (the duplicate again).
  assert.deepEqual(await send(body, standardHeaders(secret, eventId, now, body)), { status: 200, text: 'duplicate' });
  // A wrong secret and no signature at all.
  assert.deepEqual(await send(body, { 'X-Webhook-Signature': signWebhookPayload(`${secret}x`, now, body) }), { status: 400, text: 'mismatch' });
  assert.deepEqual(await send(body, {}), { status: 400, text: 'missing' });
  const verdicts = (await shop.receiver.waitFor(8)).map((l) => l.verdict);
  assert.deepEqual(verdicts, ['ok', 'duplicate', 'refused', 'refused', 'refused', 'duplicate', 'refused', 'refused']);
});

test('the Python example of docs/sdk.md creates an invoice on a real serve and fulfils on payment.completed comparing amounts', async (t) => {
  const blocks = docBlocks(ROOT).filter((b) => b.file === 'docs/sdk.md' && b.lang === 'python');
  assert.equal(blocks.length, 1, 'one Python example in docs/sdk.md');
  const example = blocks[0]!.body;
  assert.ok(example.split('\n').length <= 14, 'about ten lines');
  const shop = await startSdkShop(t, PYTHON, [join(PY, 'examples/webhook_receiver.py')]);
  const dir = mkdtempSync(join(tmpdir(), 'cg-py-doc-'));
  // The example as written, then a harness that hands it deliveries as a web framework would.
  writeFileSync(
    join(dir, 'shop.py'),
    `${example}\n\nimport json\nfor line in open("deliveries.jsonl", encoding="utf-8").read().splitlines():\n    d = json.loads(line)\n    try:\n        on_webhook(d["headers"], d["body"].encode())\n    except Exception as err:\n        print("refused", type(err).__name__, getattr(err, "reason", ""))\n`,
  );
  const completed = readFileSync(join(ROOT, 'docs/webhooks.md'), 'utf8').match(/`payment\.completed`:\n\n```json\n([\s\S]*?)\n```/)![1]!;
  const event = JSON.parse(completed) as { data: { payment: Record<string, unknown> } };
  Object.assign(event.data.payment, { receivedAmount: '24.999999', received_amount: '24.999999', amount_difference: '-0.000001' });
  const raw = JSON.stringify(event);
  const now = Math.floor(Date.now() / 1000);
  const deliveries = [
    { headers: { 'X-Webhook-Signature': signWebhookPayload(shop.creds.apiSecret, now, raw) }, body: raw },
    { headers: { 'X-Webhook-Signature': signWebhookPayload(shop.creds.apiSecret, now, raw) }, body: raw.replace('24.999999', '25') },
  ];
  writeFileSync(join(dir, 'deliveries.jsonl'), deliveries.map((d) => JSON.stringify(d)).join('\n'));
  const run = await runProgram(PYTHON, ['shop.py'], { ...shop.scriptEnv, ...withSdk }, { cwd: dir });
  assert.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split('\n');
  const invoiceId = /\/i\/([a-z0-9]+)$/.exec(lines[0]!)?.[1];
  assert.ok(invoiceId, lines[0]);
  const invoice = await createChaingateClient({ baseUrl: shop.serve.url, apiKey: shop.creds.apiKey, apiSecret: shop.creds.apiSecret }).getInvoice(invoiceId);
  assert.deepEqual([invoice.orderId, invoice.amount, invoice.status], ['order-1042', '2500', 'OPEN']);
  assert.deepEqual(lines.slice(1), ['order order-1042 underpaid -0.000001', 'refused WebhookVerificationError mismatch']);
});

test('every Python block of the SDK docs compiles, and the package installs with pip from the repository', async (t) => {
  const blocks = docBlocks(ROOT).filter((b) => b.file.startsWith('docs/sdk') && b.lang === 'python');
  assert.ok(blocks.length >= 3);
  const dir = mkdtempSync(join(tmpdir(), 'cg-py-blocks-'));
  for (const [i, b] of blocks.entries()) writeFileSync(join(dir, `block_${i}.py`), b.body);
  const compiled = await runProgram(PYTHON, ['-m', 'py_compile', ...blocks.map((_, i) => join(dir, `block_${i}.py`))]);
  assert.equal(compiled.code, 0, compiled.stderr);

  const pyproject = readFileSync(join(PY, 'pyproject.toml'), 'utf8');
  const version = /^version = "([^"]+)"/m.exec(pyproject)?.[1];
  assert.match(pyproject, /^requires-python = ">=3\.9"$/m);
  assert.match(pyproject, /^dependencies = \[\]$/m, 'no runtime dependency');
  assert.equal(readFileSync(join(PY, 'src/chaingate/__init__.py'), 'utf8').match(/__version__ = "([^"]+)"/)?.[1], version);

  const pip = await runProgram(PYTHON, ['-c', 'import pip, setuptools']);
  if (pip.code !== 0) {
    t.skip('pip or setuptools is not installed for this python3 (Debian: python3-pip python3-setuptools)');
    return;
  }
  // From a copy, so the build leaves nothing in the repository; offline, as a shop's build box may be.
  const copy = join(mkdtempSync(join(tmpdir(), 'cg-py-src-')), 'python');
  cpSync(PY, copy, { recursive: true });
  const target = mkdtempSync(join(tmpdir(), 'cg-py-site-'));
  const installed = await runProgram(PYTHON, ['-m', 'pip', 'install', '--quiet', '--no-build-isolation', '--no-deps', '--no-index', '--target', target, copy], { PIP_DISABLE_PIP_VERSION_CHECK: '1' }, { timeoutMs: 120_000 });
  assert.equal(installed.code, 0, installed.stderr);
  const imported = await runProgram(PYTHON, ['-c', 'import chaingate, os; print(chaingate.__version__, os.path.exists(os.path.join(os.path.dirname(chaingate.__file__), "py.typed")))'], { PYTHONPATH: target }, { cwd: tmpdir() });
  assert.equal(imported.stdout.trim(), `${version} True`, imported.stderr);
});
